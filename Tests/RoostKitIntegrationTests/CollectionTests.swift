import Foundation
import Testing
@testable import RoostKit

extension AgainstRoostd {
    @Suite("Typed collections") struct Collections {
        @Test("create, get, find, count, save, patch, delete")
        func crud() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let places = alice.collection("locations", of: Location.self)

            let park = try await places.create(Location(name: "Golden Gate Park", location: [-122.4862, 37.7694], categories: ["Park"]))
            #expect(park.value.name == "Golden Gate Park")
            #expect(park.acl?.creator == alice.userID)
            #expect(park.etag == "\"\(park.updatedAt!)\"")

            let fetched = try await places.get(park.id)
            #expect(fetched.value == park.value)
            #expect(try await places.count() == 1)
            #expect(try await places.find().map(\.id) == [park.id])

            var renamed = fetched
            renamed.value.name = "GG Park"
            let saved = try await places.save(renamed, condition: .unchanged(etag: fetched.etag!))
            #expect(saved.value.name == "GG Park")
            #expect(saved.updatedAt != fetched.updatedAt)

            let patched = try await places.patch(park.id, ["categories": ["Park", "Garden"]])
            #expect(patched.value.categories == ["Park", "Garden"])
            #expect(patched.value.name == "GG Park")

            try await places.delete(park.id)
            let gone = await #expect(throws: RoostError.self) { try await places.get(park.id) }
            #expect(gone?.code == .notFound)
        }

        @Test("conditional writes: a stale If-Match is 412 with the current ETag; If-None-Match only creates")
        func conditionalWrites() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let places = alice.collection("locations", of: Location.self)
            let first = try await places.create(Location(name: "Pier 39", location: [-122.41, 37.81]))
            let second = try await places.patch(first.id, ["name": "Pier 39!"])

            let stale = await #expect(throws: RoostError.self) { try await places.delete(first.id, condition: .unchanged(etag: first.etag!)) }
            guard case .server(let e)? = stale else { Issue.record("expected a server error"); return }
            #expect(e.code == .preconditionFailed)
            #expect(e.etag == second.etag)

            let exists = await #expect(throws: RoostError.self) { try await places.save(second, condition: .absent) }
            #expect(exists?.code == .preconditionFailed)
            let fresh = Entity(id: "alice-made-\(UUID().uuidString)", value: Location(name: "New", location: [0, 0]))
            #expect(try await places.save(fresh, condition: .absent).id == fresh.id)
        }

        @Test("server errors arrive as typed codes")
        func typedErrors() async throws {
            let fx = try Fixture()
            let anon = fx.client()
            let unauthorized = await #expect(throws: RoostError.self) { try await anon.collection("locations", of: Location.self).find() }
            #expect(unauthorized?.code == .unauthorized)

            let alice = try await fx.user("alice")
            let places = alice.collection("locations", of: JSONValue.self)
            let bad = await #expect(throws: RoostError.self) { try await places.find(Query(Filter(["$where": "1"]))) }
            #expect(bad?.code == .unsupportedOperator || bad?.code == .invalidQuery)
            let reserved = await #expect(throws: RoostError.self) { try await alice.collection("_x", of: JSONValue.self).find() }
            #expect(reserved?.code != nil)
            #expect(ServerError.Code(rawValue: "SomethingNew") == .unknown("SomethingNew"))
            #expect(ServerError.Code(rawValue: "CursorExpired") == .cursorExpired)
            #expect(ServerError.Code.preconditionFailed.rawValue == "PreconditionFailed")
        }

        @Test("resolve expands references")
        func resolve() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let bob = try await fx.user("bob")
            let messages = alice.collection("messages", of: Message.self)
            let sent = try await messages.create(Message(recipientId: bob.userID!, text: "hello"))
            struct Thread: Codable, Sendable { var lastMessage: Entity<Message>? }
            let threads = try await bob.collection("threads", of: Thread.self).find(Query().resolving("lastMessage"))
            #expect(threads.first?.value.lastMessage?.id == sent.id)
            #expect(threads.first?.value.lastMessage?.value.text == "hello")
        }
    }
}
