import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// The listener wakes this node when another connection commits change
/// rows, again after its own connection was killed, and stops promptly.
@Suite("PostgreSQL engine: LISTEN/NOTIFY wake-ups")
struct PostgresChangeListenerTests {
    /// Counts wake-ups; `next` waits (bounded) for one more.
    final class Wakes: @unchecked Sendable {
        let signal = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var count = 0
        func wake() { lock.withLock { count += 1 }; signal.signal() }
        /// True when a wake-up came within `seconds`.
        func next(within seconds: Double = 10) -> Bool { signal.wait(timeout: .now() + seconds) == .success }
        /// Forgets wake-ups already counted.
        func drain() { while signal.wait(timeout: .now()) == .success {} }
    }

    /// The backend pid of the connection listening in `store`'s database (nil while none).
    func listenerPID(_ store: PGTestStore) throws -> Int64? {
        try store.writer.db.first("""
            SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
            """) { $0.int(0) } ?? nil
    }

    @Test("a commit on another connection wakes the listener; so does a reconnect after its connection was killed")
    func wakesAcrossConnectionsAndReconnects() throws {
        let store = try PGTestStore()
        let wakes = Wakes()
        let listener = PostgresChangeListener(url: store.url, logger: Logger(label: "listen")) { wakes.wake() }
        listener.retryDelay = 0.1
        listener.checkInterval = 60
        try listener.start()
        defer { listener.stop() }
        #expect(wakes.next(), "the first connection wakes once (changes may have been missed before it)")
        #expect(listener.connections == 1)

        // Node A's writer commits: the listener (node C) wakes.
        try store.insert("c", [#"{"_id":"a"}"#])
        #expect(wakes.next(), "no wake-up after a commit on another connection")
        // A batch that fails writes no change rows and sends no notification.
        wakes.drain()
        let failed = store.writer.commitBatch([{ w in try w.insert(into: "c", object(#"{"_id":"a"}"#)) }])
        #expect((try? failed[0].get()) == nil)
        #expect(!wakes.next(within: 0.5), "a rolled-back batch woke the listener")

        // Kill the listening backend: the listener reconnects, listens again, and wakes once.
        let pid = try #require(try listenerPID(store))
        try store.writer.db.run("SELECT pg_terminate_backend($1::integer)", [.int(pid)])
        #expect(wakes.next(), "no wake-up after the reconnect")
        #expect(listener.connections == 2)
        let newPID = try #require(try listenerPID(store))
        #expect(newPID != pid)
        try store.insert("c", [#"{"_id":"b"}"#])
        #expect(wakes.next(), "no wake-up after a commit once reconnected")

        // Many commits in a burst: at least one wake-up, never more than commits.
        wakes.drain()
        let before = wakes.lock.withLock { wakes.count }
        for i in 0..<20 { try store.insert("c", [#"{"_id":"burst\#(i)"}"#]) }
        #expect(wakes.next())
        Thread.sleep(forTimeInterval: 0.3)
        let burst = wakes.lock.withLock { wakes.count } - before
        #expect(burst >= 1 && burst <= 20)
        #expect(listener.stop(timeout: 5), "stop did not end the thread")
    }

    @Test("stop ends the thread while the database is unreachable")
    func stopsWhileRetrying() throws {
        let wakes = Wakes()
        // A port nothing listens on (loopback): every attempt fails at once.
        let listener = PostgresChangeListener(url: "postgresql://roost@127.0.0.1:1/none?connect_timeout=2", logger: Logger(label: "listen")) { wakes.wake() }
        listener.retryDelay = 0.05
        try listener.start()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(listener.connections == 0)
        #expect(listener.stop(timeout: 5))
        #expect(!wakes.next(within: 0.1))
    }
}
