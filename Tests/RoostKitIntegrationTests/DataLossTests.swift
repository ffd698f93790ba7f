import Foundation
import Testing
@testable import RoostKit

/// Issue #40, section 2: nothing may lose an edit. Each case was written
/// first and failed on the outbox as it was.
extension AgainstRoostd {
    @Suite("No edit is lost") struct DataLoss {
        /// A synced note of Alice's, her store, and her switchable network.
        struct Setup {
            let fx: Fixture
            let net: SwitchableTransport
            let alice: RoostClient
            let store: OfflineStore
            let notes: OfflineCollection<Note>
            let note: Entity<Note>

            init() async throws {
                fx = try Fixture()
                net = SwitchableTransport()
                alice = try await fx.user("alice", transport: net)
                store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("notes")])
                notes = store.collection("notes", of: Note.self)
                let draft = try await notes.create(Note(title: "first", stars: 0))
                try await store.sync()
                note = try #require(try await notes.get(draft.id))
            }
        }

        /// A place Alice and Bob may both edit, mirrored in Alice's store.
        struct SharedPlace {
            let fx: Fixture
            let net: SwitchableTransport
            let alice: RoostClient
            let bob: RoostClient
            let store: OfflineStore
            let local: OfflineCollection<Location>
            let place: Entity<Location>

            init() async throws {
                fx = try Fixture()
                net = SwitchableTransport()
                alice = try await fx.user("alice", transport: net)
                bob = try await fx.user("bob")
                place = try await alice.collection("locations", of: Location.self)
                    .create(Location(name: "original", location: [0, 0]), acl: ACL(read: [bob.userID!], write: [bob.userID!]))
                store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("locations")])
                try await store.sync()
                local = store.collection("locations", of: Location.self)
            }

            func server() async throws -> Location { try await bob.collection("locations", of: Location.self).get(place.id).value }
        }

        enum ReplayedWrite: String, CaseIterable { case patch, replace }

        @Test("a replayed write whose answer was lost, already on the server, is a success; the edit after it survives",
              arguments: ReplayedWrite.allCases)
        func replayAlreadyApplied(kind: ReplayedWrite) async throws {
            let s = try await Setup()
            switch kind {
            case .patch: try await s.notes.patch(s.note.id, ["stars": 1])
            case .replace:
                var edited = s.note
                edited.value.stars = 1
                try await s.notes.save(edited)
            }
            s.net.loseAnswers = 1   // the server applies it; the phone never hears back
            await #expect(throws: RoostError.self) { try await s.store.sync() }
            try await s.notes.patch(s.note.id, ["title": "newer"])

            let report = try await s.store.sync()
            #expect(report.conflicts == 0)
            #expect(report.sent == 2)
            #expect(try await s.store.conflicts().isEmpty)
            #expect(try await s.store.pendingWrites().isEmpty)
            let server = try await s.alice.collection("notes", of: Note.self).get(s.note.id).value
            #expect(server == Note(title: "newer", stars: 1))
            #expect(try await s.notes.get(s.note.id)?.value == server)
        }

        @Test("offline attempts are not conflicts: after many failed syncs the resolver still decides")
        func offlineAttemptsAreNotConflicts() async throws {
            let p = try await SharedPlace()
            let asked = Locked(0)
            await p.store.setConflictResolver { _ in asked.update { $0 += 1 }; return .keepLocal }
            p.net.online = false
            try await p.local.patch(p.place.id, ["name": "alice offline"])
            for _ in 0..<6 { await #expect(throws: RoostError.self) { try await p.store.sync() } }
            try await p.bob.collection("locations", of: Location.self).patch(p.place.id, ["categories": ["bob"]])

            p.net.online = true
            let report = try await p.store.sync()
            #expect(asked.value == 1)
            #expect(report.conflicts == 1)
            #expect(try await p.server().name == "alice offline")
            #expect(try await p.store.conflicts().isEmpty)
        }

        @Test("a write made while the resolver is awaited is kept and sent",
              arguments: [ConflictResolution.keepLocal, .keepServer])
        func writesDuringResolverAreKept(resolution: ConflictResolution) async throws {
            let p = try await SharedPlace()
            let local = p.local, id = p.place.id
            await p.store.setConflictResolver { _ in
                // The user edits again while the conflict dialog is up.
                _ = try? await local.patch(id, ["categories": ["edited during the dialog"]])
                return resolution
            }
            p.net.online = false
            try await p.local.patch(p.place.id, ["name": "alice offline"])
            try await p.bob.collection("locations", of: Location.self).patch(p.place.id, ["name": "bob online"])
            p.net.online = true
            let report = try await p.store.sync()
            #expect(report.conflicts == 1)
            #expect(try await p.store.pendingWrites().isEmpty)
            let server = try await p.server()
            #expect(server.categories == ["edited during the dialog"])
            #expect(server.name == (resolution == .keepLocal ? "alice offline" : "bob online"))
            #expect(try await p.local.get(id)?.value == server)
        }

        @Test("a write the server keeps refusing does not block the writes after it, nor the pull")
        func refusedWriteDoesNotBlock() async throws {
            let s = try await Setup()
            s.net.failing = [s.note.id]
            try await s.notes.patch(s.note.id, ["stars": 2])
            let other = try await s.notes.create(Note(title: "second"))
            let bobsView = try await s.alice.collection("notes", of: Note.self).create(Note(title: "made elsewhere"))

            await s.store.setMaxAttempts(3)
            let first = try await s.store.sync()
            #expect(first.failed == 1 && first.sent == 1 && first.deadLettered == 0)
            #expect(try await s.alice.collection("notes", of: Note.self).get(other.id).value.title == "second")
            #expect(try await s.notes.get(bobsView.id)?.value.title == "made elsewhere")
            #expect(try await s.store.pendingWrites().map(\.id) == [s.note.id])
            #expect(try await s.notes.get(s.note.id)?.value.stars == 2)   // still the local edit while it waits

            // Bounded: the third failure moves it to the dead-letter list, and the mirror shows the server's copy.
            #expect(try await s.store.sync().failed == 1)
            let third = try await s.store.sync()
            #expect(third.deadLettered == 1 && third.deadLetters == 1 && third.pending == 0)
            let letters = try await s.store.deadLetters()
            #expect(letters.map(\.write.id) == [s.note.id])
            #expect(letters.first?.status == 500 && letters.first?.attempts == 3)
            #expect(letters.first?.error.hasPrefix("HookFailed") == true)
            #expect(try await s.notes.get(s.note.id)?.value.stars == 0)

            // The app retries it once the server takes it again.
            s.net.failing = []
            try await s.store.retryDeadLetter(letters[0].sequence)
            #expect(try await s.notes.get(s.note.id)?.value.stars == 2)
            #expect(try await s.store.sync().sent == 1)
            #expect(try await s.alice.collection("notes", of: Note.self).get(s.note.id).value.stars == 2)
            #expect(try await s.store.deadLetters().isEmpty)
        }

        @Test("a write refused for good goes to the dead-letter list at once, with the document's later writes; the rest is sent")
        func refusedForGood() async throws {
            let s = try await Setup()
            let store = try OfflineStore(client: s.alice, url: s.fx.storeURL("alice-threads"), mirrors: [Mirror("threads"), Mirror("notes")])
            // Clients may not write threads (the server writes them as messages are sent): 403 whatever the id.
            let threads = store.collection("threads", of: JSONValue.self)
            let thread = try await threads.create(["title": "mine"])
            try await threads.patch(thread.id, ["title": "still mine"])
            let note = try await store.collection("notes", of: Note.self).create(Note(title: "after the thread"))
            let report = try await store.sync()
            #expect(report.deadLettered == 2 && report.sent == 1 && report.conflicts == 0)
            let letters = try await store.deadLetters()
            #expect(letters.map(\.write.operation) == [.create, .patch])
            #expect(letters.map(\.status) == [403, nil])
            #expect(try await store.conflicts().isEmpty)
            #expect(try await threads.get(thread.id) == nil)
            #expect(try await s.alice.collection("notes", of: Note.self).get(note.id).value.title == "after the thread")
            try await store.discardDeadLetter(letters[1].sequence)
            #expect(try await store.deadLetters().map(\.write.operation) == [.create])
        }

        @Test("one mirror the server refuses does not stop the others")
        func failingMirror() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let made = try await alice.collection("notes", of: Note.self).create(Note(title: "on the server"))
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"),
                                         mirrors: [Mirror("aaa", filter: Filter(["$where": "sleep(1)"])), Mirror("notes")])
            let report = try await store.sync()
            #expect(try await store.collection("notes", of: Note.self).get(made.id)?.value.title == "on the server")
            #expect(report.mirrorFailures.keys.sorted() == ["aaa"])
            #expect(report.mirrorFailures["aaa"]?.contains("UnsupportedOperator") == true)
        }
    }
}
