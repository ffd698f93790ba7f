import Foundation
import Testing
@testable import RoostKit

extension AgainstRoostd {
    @Suite("Live updates") struct Live {
        /// Collects a stream's events in the background.
        final class Collector: @unchecked Sendable {
            let events = Locked<[LiveEvent]>([])
            var task: Task<Void, Never>?

            init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == LiveEvent {
                task = Task { [events] in
                    do { for try await e in sequence { events.update { $0.append(e) } } } catch {}
                }
            }

            func waitFor(_ count: Int, seconds: Double = 15) async throws -> [LiveEvent] {
                let deadline = Date().addingTimeInterval(seconds)
                while events.value.count < count, Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
                return events.value
            }

            deinit { task?.cancel() }
        }

        @Test("messages arrive live, and keep arriving exactly once across a server restart")
        func liveAcrossRestart() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let bob = try await fx.user("bob")
            let inbox = Collector(alice.live("messages", reconnect: ReconnectPolicy(initialDelay: 0.1, maximumDelay: 0.5)))
            try await Task.sleep(nanoseconds: 300_000_000)

            let bobMessages = bob.collection("messages", of: Message.self)
            let first = try await bobMessages.create(Message(recipientId: alice.userID!, text: "one"))
            let events = try await inbox.waitFor(1)
            #expect(events.map(\.entityID) == [first.id])
            #expect(events.first?.kind == .create)
            #expect(try events.first?.entity(as: Message.self)?.value.text == "one")
            #expect(events.first?.id != nil)

            fx.server.stop()
            try fx.server.start()
            let second = try await bobMessages.create(Message(recipientId: alice.userID!, text: "two"))
            let after = try await inbox.waitFor(2)
            #expect(after.map(\.entityID) == [first.id, second.id])
        }

        @Test("the offline mirror follows the live stream")
        func mirrorFollowsLive() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let bob = try await fx.user("bob")
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("messages")])
            try await store.sync()
            let live = Collector(store.liveUpdates("messages"))
            try await Task.sleep(nanoseconds: 300_000_000)
            let sent = try await bob.collection("messages", of: Message.self).create(Message(recipientId: alice.userID!, text: "live"))
            _ = try await live.waitFor(1)
            #expect(try await store.collection("messages", of: Message.self).get(sent.id)?.value.text == "live")
            // The next sync finds the mirror already up to date.
            let report = try await store.sync()
            #expect(report.changed == 0)
        }
    }
}
