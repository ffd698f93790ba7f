import Foundation
import Testing
@testable import RoostKit

/// Issue #40, section 4: the phone's lifecycle (network changes, relaunches).
extension AgainstRoostd {
    @Suite("Lifecycle") struct Lifecycle {
        typealias Collector = Live.Collector

        @Test("a network change reconnects a live stream that went dead at once, not after the idle timeout")
        func reconnectOnNetworkChange() async throws {
            let fx = try Fixture()
            let net = SwitchableTransport()
            let alice = try await fx.user("alice", transport: net)
            let bob = try await fx.user("bob")
            let inbox = Collector(alice.live("messages", reconnect: ReconnectPolicy(initialDelay: 0.1, maximumDelay: 0.5)))
            try await Task.sleep(nanoseconds: 300_000_000)
            let bobMessages = bob.collection("messages", of: Message.self)
            let first = try await bobMessages.create(Message(recipientId: alice.userID!, text: "before"))
            #expect(try await inbox.waitFor(1).map(\.entityID) == [first.id])

            // The server restarts while the phone switches networks: the stream reconnects
            // into a connection that is dead (it would take the 45 s idle timeout to notice).
            net.hangStreams = true
            fx.server.stop()
            try fx.server.start()
            try await Task.sleep(nanoseconds: 1_500_000_000)
            let second = try await bobMessages.create(Message(recipientId: alice.userID!, text: "while away"))
            try await Task.sleep(nanoseconds: 1_500_000_000)
            #expect(inbox.events.value.count == 1)

            // The new network path is up (NetworkPathObserver) or the app came to the foreground.
            net.hangStreams = false
            let asked = Date()
            alice.reconnectLiveStreams()
            let events = try await inbox.waitFor(2, seconds: 10)
            #expect(events.map(\.entityID) == [first.id, second.id])   // resumed after the last event: nothing lost, nothing twice
            #expect(Date().timeIntervalSince(asked) < 3, "reconnected \(Date().timeIntervalSince(asked)) s after the nudge")
        }

        @Test("one /events stream feeds every mirror; a relaunch resumes after the last event without a resync")
        func multiplexedAndResumed() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let bob = try await fx.user("bob")
            let path = fx.storeURL("alice")
            let bobMessages = bob.collection("messages", of: Message.self)
            var firstID = ""
            do {
                let store = try OfflineStore(client: alice, url: path, mirrors: [Mirror("messages"), Mirror("threads")])
                let live = Collector(store.liveUpdates())
                try await Task.sleep(nanoseconds: 300_000_000)
                firstID = try await bobMessages.create(Message(recipientId: alice.userID!, text: "one")).id
                let events = try await live.waitFor(2)
                #expect(Set(events.map(\.collection)) == ["messages", "threads"])   // both on one connection
                #expect(try await store.collection("messages", of: Message.self).get(firstID)?.value.text == "one")
                #expect(try await store.collection("threads", of: JSONValue.self).find().count == 1)
                live.task?.cancel()
                try await Task.sleep(nanoseconds: 200_000_000)
            }
            // The app is not running while Bob writes again.
            let second = try await bobMessages.create(Message(recipientId: alice.userID!, text: "two"))

            let relaunched = try OfflineStore(client: alice, url: path, mirrors: [Mirror("messages"), Mirror("threads")])
            let live = Collector(relaunched.liveUpdates())
            let events = try await live.waitFor(2)
            #expect(!events.contains { $0.kind == .reset })
            #expect(!events.contains { $0.entityID == firstID })   // resumed after it, not replayed from the start
            #expect(events.contains { $0.entityID == second.id && $0.collection == "messages" })
            #expect(try await relaunched.collection("messages", of: Message.self).get(second.id)?.value.text == "two")
        }

        @Test("automatic sync: on foreground or a network change, after a new log-in, and for a silent push")
        func automaticSync() async throws {
            let fx = try Fixture()
            let net = SwitchableTransport()
            let alice = try await fx.user("alice", transport: net)
            let name = alice.session!.user.username
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("notes")])
            let foreground = Notification.Name("RoostKitTests.foreground-\(UUID().uuidString)")
            let auto = AutomaticSync(store: store, foregroundNotification: foreground)
            let notes = store.collection("notes", of: Note.self)
            func waitUntilSent() async throws -> Bool {
                let deadline = Date().addingTimeInterval(5)
                while Date() < deadline {
                    if try await store.pendingWrites().isEmpty { return true }
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                return false
            }

            // Written in a tunnel; the network comes back (NetworkPathObserver) or the app is foregrounded.
            net.online = false
            let tunnel = try await notes.create(Note(title: "in a tunnel"))
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(try await store.pendingWrites().count == 1)
            net.online = true
            alice.reconnectLiveStreams()
            #expect(try await waitUntilSent())
            #expect(try await alice.collection("notes", of: Note.self).get(tunnel.id).value.title == "in a tunnel")

            // The app comes to the foreground (UIApplication's notification on iOS; a stand-in here).
            net.online = false
            let pocket = try await notes.create(Note(title: "written before the app was put away"))
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(try await store.pendingWrites().count == 1)
            net.online = true
            NotificationCenter.default.post(name: foreground, object: nil)
            #expect(try await waitUntilSent())
            #expect(try await alice.collection("notes", of: Note.self).get(pocket.id).value.title == "written before the app was put away")

            // The session expires (password changed elsewhere); the write waits for the next log-in, then goes.
            let laptop = fx.client()
            try await laptop.logIn(username: name, password: "password-alice")
            try await laptop.changePassword(from: "password-alice", to: "a new passphrase")
            let waiting = try await notes.create(Note(title: "after the expiry"))
            await #expect(throws: RoostError.self) { try await store.sync() }
            #expect(alice.session == nil)
            try await alice.logIn(username: name, password: "a new passphrase")
            #expect(try await waitUntilSent())
            #expect(try await alice.collection("notes", of: Note.self).get(waiting.id).value.title == "after the expiry")

            // A silent push: something new on the server is pulled. (One sync first takes in what the
            // automatic syncs above may still be bringing, so the first push finds nothing new.)
            _ = try await store.sync()
            #expect(await store.syncForRemoteNotification() == .noData)
            _ = try await laptop.collection("notes", of: Note.self).create(Note(title: "from the laptop"))
            #expect(await store.syncForRemoteNotification() == .newData)
            #expect(try await notes.find().map(\.value.title).contains("from the laptop"))
            _ = auto
        }
    }
}
