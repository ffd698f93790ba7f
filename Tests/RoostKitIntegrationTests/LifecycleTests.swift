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
    }
}
