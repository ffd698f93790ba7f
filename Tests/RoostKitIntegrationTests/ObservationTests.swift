import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import RoostKit

/// Issue #40, section 3: what SwiftUI observes.
extension AgainstRoostd {
    @Suite("Observation") struct Observation {
        /// Collects a stream's elements in the background.
        final class Recorder<Element: Sendable>: @unchecked Sendable {
            let items = Locked<[Element]>([])
            var task: Task<Void, Never>?

            init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
                task = Task { [items] in
                    do { for try await e in sequence { items.update { $0.append(e) } } } catch {}
                }
            }

            /// Waits until the newest element satisfies `done`; returns it.
            func waitFor(seconds: Double = 15, _ done: (Element) -> Bool) async throws -> Element? {
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    if let last = items.value.last, done(last) { return last }
                    try await Task.sleep(nanoseconds: 20_000_000)
                }
                return items.value.last
            }

            deinit { task?.cancel() }
        }

        @Test("query results follow local writes, sync, other users' changes and live events, with pending writes marked")
        func resultsStream() async throws {
            let fx = try Fixture()
            let net = SwitchableTransport()
            let alice = try await fx.user("alice", transport: net)
            let bob = try await fx.user("bob")
            let shared = ACL(read: [alice.userID!, bob.userID!], write: [alice.userID!, bob.userID!])
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("locations")])
            let places = store.collection("locations", of: Location.self)
            let results = Recorder(places.results(Query().sorted(by: "name")))
            #expect(try await results.waitFor { $0.entities.isEmpty } != nil)

            net.online = false
            let mine = try await places.create(Location(name: "a: made offline", location: [0, 0]), acl: shared)
            let offline = try await results.waitFor { $0.entities.count == 1 }
            #expect(offline?.entities.map(\.id) == [mine.id])
            #expect(offline?.hasPendingWrites(mine.id) == true)

            net.online = true
            try await store.sync()
            let synced = try await results.waitFor { !$0.hasPendingWrites(mine.id) }
            #expect(synced?.pendingIDs.isEmpty == true)
            #expect(synced?.entities.first?.updatedAt != nil)   // the server's copy now

            // Bob's change arrives by sync...
            let theirs = try await bob.collection("locations", of: Location.self)
                .create(Location(name: "b: bob's", location: [1, 1]), acl: shared)
            try await store.sync()
            let pulled = try await results.waitFor { $0.entities.count == 2 }
            #expect(pulled?.entities.map(\.value.name) == ["a: made offline", "b: bob's"])

            // ...and by the live stream.
            let live = Recorder(store.liveUpdates("locations"))
            try await Task.sleep(nanoseconds: 300_000_000)
            try await bob.collection("locations", of: Location.self).patch(theirs.id, ["name": "c: bob's, renamed"])
            let followed = try await results.waitFor { $0.entities.last?.value.name == "c: bob's, renamed" }
            #expect(followed?.entities.map(\.value.name) == ["a: made offline", "c: bob's, renamed"])
            _ = live
        }

        #if canImport(Observation)
        @Test("the @Observable model follows the store on the main actor")
        @MainActor
        func observableModel() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("notes")])
            let notes = store.collection("notes", of: Note.self)
            let model = RoostQueryModel(notes, query: Query(Field("stars") >= 3).sorted(by: "title"))
            func wait(_ done: () -> Bool) async throws {
                let deadline = Date().addingTimeInterval(15)
                while !done(), Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            }
            try await wait { model.isLoaded }
            #expect(model.isLoaded && model.entities.isEmpty)
            let good = try await notes.create(Note(title: "good", stars: 4))
            _ = try await notes.create(Note(title: "meh", stars: 1))
            try await wait { model.entities.count == 1 }
            #expect(model.entities.map(\.id) == [good.id])
            #expect(model.hasPendingWrites(good.id))
            try await store.sync()
            try await wait { !model.hasPendingWrites(good.id) }
            #expect(!model.hasPendingWrites(good.id))
            try await notes.patch(good.id, ["stars": 2])
            try await wait { model.entities.isEmpty }
            #expect(model.entities.isEmpty)
            #expect(model.error == nil)
            model.stop()
        }
        #endif

        @Test("a session ended by the server is reported as expired, the outbox is kept and sent after the next log-in")
        func sessionExpiry() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let name = alice.session!.user.username
            let states = Recorder(alice.sessionStates())
            #expect(try await states.waitFor { if case .signedIn = $0 { return true }; return false } != nil)
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("notes")])
            let queued = try await store.collection("notes", of: Note.self).create(Note(title: "written before the expiry"))

            // The password changes on another device: this session is revoked there.
            let laptop = fx.client()
            try await laptop.logIn(username: name, password: "password-alice")
            try await laptop.changePassword(from: "password-alice", to: "another passphrase")

            let refused = await #expect(throws: RoostError.self) { try await store.sync() }
            #expect(refused?.code == .invalidToken)
            #expect(try await states.waitFor { $0 == .expired } == .expired)
            #expect(alice.session == nil)
            #expect(try await store.pendingWrites().map(\.id) == [queued.id])
            await #expect(throws: RoostError.notSignedIn) { try await alice.currentUser() }

            try await alice.logIn(username: name, password: "another passphrase")
            #expect(try await states.waitFor { if case .signedIn = $0 { return true }; return false } != nil)
            #expect(try await store.sync().sent == 1)
            #expect(try await alice.collection("notes", of: Note.self).get(queued.id).value.title == "written before the expiry")
            // A wrong password at log-in is not an expiry.
            await #expect(throws: RoostError.self) { try await alice.logIn(username: name, password: "wrong one") }
            #expect(alice.session != nil)
            try await alice.logOut()
            #expect(try await states.waitFor { $0 == .signedOut } == .signedOut)
            #expect(states.items.value.filter { $0 == .expired }.count == 1)
        }

        @Test("errors keep the URLError and cancellation, and read as sentences")
        func errors() async throws {
            let closed = RoostClient(baseURL: URL(string: "http://127.0.0.1:9")!)
            let offline = await #expect(throws: RoostError.self) { try await closed.collection("notes", of: Note.self).find() }
            #expect(offline?.urlError?.code == .cannotConnectToHost)
            #expect(offline?.isOffline == true)
            #expect(offline?.localizedDescription == "The server could not be reached.")

            let fx = try Fixture()
            let alice = try await fx.user("alice")
            // The task waits until it is cancelled, so the request always starts in a cancelled task
            // (a task left to run at once could finish its request before `cancel()` on a busy machine).
            let task = Task {
                try? await Task.sleep(for: .seconds(30))
                return try await alice.collection("notes", of: Note.self).find()
            }
            task.cancel()
            let cancelled = await #expect(throws: RoostError.self) { try await task.value }
            #expect(cancelled == .cancelled)

            let ats = RoostError.from(transport: URLError(.appTransportSecurityRequiresSecureConnection))
            #expect(!ats.isOffline)
            #expect(ats.localizedDescription.contains("App Transport Security"))
            #expect(ats.recoverySuggestion?.contains("https://") == true)
            let refused = await #expect(throws: RoostError.self) { try await alice.collection("notes", of: Note.self).get("nope") }
            #expect(refused?.localizedDescription.isEmpty == false)
            #expect(refused?.isOffline == false)
        }
    }
}
