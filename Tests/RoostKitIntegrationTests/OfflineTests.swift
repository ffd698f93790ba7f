import Foundation
import Testing
@testable import RoostKit

extension AgainstRoostd {
    @Suite("Offline store") struct Offline {
        @Test("queued writes survive closing and reopening the store, then reach the server in order")
        func durableOutbox() async throws {
            let fx = try Fixture()
            let network = SwitchableTransport()
            let alice = try await fx.user("alice", transport: network)
            let path = fx.storeURL("alice")
            network.online = false
            var ids: [String] = []
            do {
                let store = try OfflineStore(client: alice, url: path, mirrors: [Mirror("notes")])
                let notes = store.collection("notes", of: Note.self)
                let a = try await notes.create(Note(title: "first"))
                let b = try await notes.create(Note(title: "second"))
                try await notes.patch(a.id, ["stars": 5])
                try await notes.delete(b.id)
                ids = [a.id, b.id]
                #expect(a.id.hasPrefix(alice.userID! + ":"))
                await #expect(throws: RoostError.self) { try await store.sync() }
            }
            // A new launch: a new store object on the same file.
            let reopened = try OfflineStore(client: alice, url: path, mirrors: [Mirror("notes")])
            let pending = try await reopened.pendingWrites()
            #expect(pending.map(\.operation) == [.create, .create, .patch, .delete])
            #expect(pending.map(\.id) == [ids[0], ids[1], ids[0], ids[1]])
            let local = reopened.collection("notes", of: Note.self)
            #expect(try await local.get(ids[0])?.value == Note(title: "first", stars: 5))
            #expect(try await local.get(ids[1]) == nil)

            network.online = true
            let report = try await reopened.sync()
            #expect(report.sent == 4)
            #expect(report.pending == 0)
            #expect(try await reopened.pendingWrites().isEmpty)
            let server = try await alice.collection("notes", of: Note.self).find()
            #expect(server.map(\.id) == [ids[0]])
            #expect(server.first?.value == Note(title: "first", stars: 5))
            // The mirror now holds the server's copy (timestamps included).
            #expect(try await local.get(ids[0])?.updatedAt == server.first?.updatedAt)
        }

        @Test("two clients, one offline, both edit; it comes back and the mirrors converge")
        func convergence() async throws {
            let fx = try Fixture()
            let net = SwitchableTransport()
            let alice = try await fx.user("alice", transport: net)
            let bob = try await fx.user("bob")
            // A shared collection both may write: each document's _acl lets the other write.
            let shared = ACL(read: [alice.userID!, bob.userID!], write: [alice.userID!, bob.userID!])
            let places = alice.collection("locations", of: Location.self)
            let p1 = try await places.create(Location(name: "one", location: [0, 0]), acl: shared)
            let p2 = try await places.create(Location(name: "two", location: [1, 1]), acl: shared)

            let aStore = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("locations")])
            let bStore = try OfflineStore(client: bob, url: fx.storeURL("bob"), mirrors: [Mirror("locations")])
            try await aStore.sync()
            try await bStore.sync()
            let aLocal = aStore.collection("locations", of: Location.self)
            let bLocal = bStore.collection("locations", of: Location.self)
            #expect(try await bLocal.find().count == 2)

            net.online = false
            try await aLocal.patch(p1.id, ["name": "one (alice, offline)"])
            let aNew = try await aLocal.create(Location(name: "alice's new", location: [2, 2]))
            try await bLocal.patch(p2.id, ["name": "two (bob)"])
            let bNew = try await bLocal.create(Location(name: "bob's new", location: [3, 3]), acl: shared)
            try await bStore.sync()
            await #expect(throws: RoostError.self) { try await aStore.sync() }
            #expect(try await aLocal.find().count == 3)   // reads still work offline

            net.online = true
            let report = try await aStore.sync()
            #expect(report.sent == 2 && report.conflicts == 0)
            try await bStore.sync()

            let server = try await alice.collection("locations", of: JSONValue.self).find(Query().sorted(by: "_id"))
            let aMirror = try await aStore.find("locations", Query().sorted(by: "_id"))
            let bMirror = try await bStore.find("locations", Query().sorted(by: "_id"))
            #expect(server.count == 4)
            #expect(aMirror == server.map(\.value))
            #expect(bMirror.map { $0["_id"] } == server.map { $0.value["_id"] })
            #expect(bMirror.map { $0["name"] } == server.map { $0.value["name"] })
            #expect(Set(server.compactMap { $0.value["name"]?.stringValue })
                    == ["one (alice, offline)", "two (bob)", "alice's new", "bob's new"])
            _ = (aNew, bNew)
        }

        @Test("a conflicting offline edit reaches the resolver; by default the server wins and the local change is kept")
        func conflicts() async throws {
            let fx = try Fixture()
            let net = SwitchableTransport()
            let alice = try await fx.user("alice", transport: net)
            let bob = try await fx.user("bob")
            let shared = ACL(read: [bob.userID!], write: [bob.userID!])
            let places = alice.collection("locations", of: Location.self)
            let p = try await places.create(Location(name: "original", location: [0, 0]), acl: shared)
            let q = try await places.create(Location(name: "other", location: [1, 1]), acl: shared)

            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("locations")])
            try await store.sync()
            let local = store.collection("locations", of: Location.self)
            let seen = Locked<[Conflict]>([])
            await store.setConflictResolver { conflict in
                seen.update { $0.append(conflict) }
                return conflict.id == q.id ? .merge(conflict.server!.merging(patch: ["name": "merged"])) : .keepServer
            }

            net.online = false
            try await local.patch(p.id, ["name": "alice offline"])
            try await local.patch(q.id, ["name": "alice offline too"])
            // Bob changes both meanwhile.
            try await bob.collection("locations", of: Location.self).patch(p.id, ["name": "bob online"])
            try await bob.collection("locations", of: Location.self).patch(q.id, ["categories": ["bob"]])

            net.online = true
            let report = try await store.sync()
            #expect(report.conflicts == 2)
            let conflicts = seen.value
            #expect(conflicts.map(\.id) == [p.id, q.id])
            #expect(conflicts.first?.local?["name"] == "alice offline")
            #expect(conflicts.first?.server?["name"] == "bob online")

            // p: the server won; the local change is recorded for the app.
            #expect(try await places.get(p.id).value.name == "bob online")
            #expect(try await local.get(p.id)?.value.name == "bob online")
            let recorded = try await store.conflicts()
            #expect(recorded.map(\.conflict.id) == [p.id])
            #expect(recorded.first?.reason == "PreconditionFailed")
            #expect(recorded.first?.conflict.local?["name"] == "alice offline")
            try await store.dismissConflict(recorded[0].sequence)
            #expect(try await store.conflicts().isEmpty)

            // q: the merge was written over Bob's version.
            let merged = try await places.get(q.id).value
            #expect(merged.name == "merged" && merged.categories == ["bob"])
            #expect(try await local.get(q.id)?.value == merged)
        }

        @Test("messages sent offline get ids in the sender's namespace and arrive once online")
        func offlineMessages() async throws {
            let fx = try Fixture()
            let net = SwitchableTransport()
            let alice = try await fx.user("alice", transport: net)
            let bob = try await fx.user("bob")
            let aStore = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("messages")])
            let bStore = try OfflineStore(client: bob, url: fx.storeURL("bob"), mirrors: [Mirror("messages")])
            net.online = false
            let sent = try await aStore.collection("messages", of: Message.self).create(Message(recipientId: bob.userID!, text: "sent on a plane"))
            #expect(sent.id.hasPrefix("\(alice.userID!):"))
            net.online = true
            // Replaying twice (an answer lost, say) creates it once.
            try await aStore.sync()
            try await bStore.sync()
            let inbox = try await bStore.collection("messages", of: Message.self).find()
            #expect(inbox.map(\.id) == [sent.id])
            #expect(inbox.first?.value.senderId == alice.userID)
            #expect(try await aStore.collection("messages", of: Message.self).get(sent.id)?.value.threadId != nil)
        }
    }
}
