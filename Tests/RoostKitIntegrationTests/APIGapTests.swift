import Foundation
import Testing
@testable import RoostKit

/// Issue #40, section 5: the calls an app needs that RoostKit 0.2.0 lacked.
extension AgainstRoostd {
    @Suite("API gaps") struct APIGaps {
        /// A place whose location is a `GeoPoint` (0.2.0 encoded it as an object no geo query matched).
        struct Place: Codable, Sendable, Equatable { var name: String; var location: GeoPoint }

        @Test("a GeoPoint is stored as [lng, lat], so the server's geo queries find it")
        func geoPoint() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let places = alice.collection("locations", of: Place.self)
            let tower = try await places.create(Place(name: "Coit Tower", location: GeoPoint(-122.4058, 37.8024)))
            _ = try await places.create(Place(name: "MoMA", location: GeoPoint(-73.9776, 40.7614)))
            let raw = try await alice.collection("locations", of: JSONValue.self).get(tower.id)
            #expect(raw.value["location"] == [-122.4058, 37.8024])
            let near = try await places.find(Query(Field("location").near(GeoPoint(-122.41, 37.80), maxDistance: 2000)))
            #expect(near.map(\.value) == [Place(name: "Coit Tower", location: GeoPoint(-122.4058, 37.8024))])
            let circle = try await places.find(Query(Field("location").within(radius: 5000, of: GeoPoint(-73.98, 40.76))))
            #expect(circle.map(\.value.name) == ["MoMA"])
        }

        @Test("keyset paging walks every document once, in order, page by page")
        func keysetPaging() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let notes = alice.collection("notes", of: Note.self)
            for i in 0..<7 { _ = try await notes.create(Note(title: "n\(i)", stars: i % 3)) }
            let query = Query().sorted(by: "stars").sorted(by: "title").limit(3)
            var pages: [[String]] = []
            var q = query
            repeat {
                let page = try await notes.page(q)
                pages.append(page.entities.map(\.value.title))
                q = q.after(page.next)
            } while q.after != nil
            #expect(pages.count == 3)
            let expected = try await notes.find(query.limit(100)).map(\.value.title)
            #expect(pages.flatMap { $0 } == expected)
            #expect(expected == ["n0", "n3", "n6", "n1", "n4", "n2", "n5"])
            var streamed: [String] = []
            for try await note in notes.all(query) { streamed.append(note.value.title) }
            #expect(streamed == expected)
            // A made-up cursor is the server's 400, not a crash or an empty page.
            let bad = await #expect(throws: RoostError.self) { try await notes.page(query.after("not-a-cursor")) }
            #expect(bad?.code == .invalidQuery)
        }

        @Test("a batch applies every write or none, and names the one that failed")
        func batch() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let id = "\(alice.userID!):batch"
            let results = try await alice.batch([
                .create("locations", ["_id": "tiergarten", "name": "Tiergarten", "location": [13.3501, 52.5145]]),
                .patch("locations", "tiergarten", ["details": "The city's largest park."]),
                .put("notes", id, ["title": "from a batch"], condition: .absent),
            ])
            #expect(results.map(\.status) == [201, 200, 201])
            #expect(try results[1].entity(as: JSONValue.self).value["details"] == "The city's largest park.")
            #expect(try await alice.collection("notes", of: Note.self).get(id).value.title == "from a batch")

            let refused = await #expect(throws: RoostError.self) {
                try await alice.batch([
                    .patch("locations", "tiergarten", ["details": "never applied"]),
                    .put("notes", id, ["title": "again"], condition: .absent),   // exists: 412
                ])
            }
            guard case .server(let error)? = refused else { Issue.record("expected a server error"); return }
            #expect(error.status == 412 && error.operation == 1)
            #expect(try await alice.collection("locations", of: JSONValue.self).get("tiergarten").value["details"] == "The city's largest park.")
        }

        @Test("profile update, password change, account deletion")
        func account() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let name = alice.session!.user.username
            let updated = try await alice.updateProfile(["title": "Engineer", "firstName": nil])
            #expect(updated.fields["title"] == "Engineer" && updated.fields["firstName"] == nil)
            #expect(alice.session?.user.fields["title"] == "Engineer")
            #expect(try await alice.currentUser().fields["title"] == "Engineer")
            let renamed = await #expect(throws: RoostError.self) { try await alice.updateProfile(["username": "someone-else"]) }
            #expect(renamed?.code == .immutableField)

            // Another device's session ends when the password changes; this one goes on.
            let phone = fx.client()
            try await phone.logIn(username: name, password: "password-alice")
            let wrong = await #expect(throws: RoostError.self) { try await alice.changePassword(from: "not-it", to: "a new passphrase") }
            #expect(wrong?.code == .forbidden)
            try await alice.changePassword(from: "password-alice", to: "a new passphrase")
            #expect(try await alice.currentUser().username == name)
            let ended = await #expect(throws: RoostError.self) { try await phone.currentUser() }
            #expect(ended?.code == .invalidToken)
            await #expect(throws: RoostError.self) { try await fx.client().logIn(username: name, password: "password-alice") }
            try await fx.client().logIn(username: name, password: "a new passphrase")

            try await alice.deleteAccount()
            #expect(alice.session == nil)
            let gone = await #expect(throws: RoostError.self) { try await fx.client().logIn(username: name, password: "a new passphrase") }
            #expect(gone?.code == .invalidCredentials)
        }
    }
}
