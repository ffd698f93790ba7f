import Foundation
import Logging
import Store
@testable import StorePostgres
import Testing

/// The log-in counters shared by nodes: a check-then-count on one node never
/// loses another node's count.
@Suite("PostgreSQL engine: log-in throttle across nodes")
struct PostgresLoginThrottleTests {
    /// The throttle's read-modify-write: one more failure on `key`.
    static func count(_ writer: PostgresDocumentWriter, _ key: String) throws {
        try writer.inBatch { w in
            let c = try w.loginCounter(key)
            try w.saveLoginCounter(key, failures: (c?.failures ?? 0) + 1, windowStart: c?.windowStart ?? 100, blockedUntil: 0)
        }
    }

    @Test("two nodes counting the same key at once lose no count")
    func concurrentCounts() throws {
        let store = try PGTestStore()
        let writers = try (0..<2).map { _ in HandOver(try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "n"))) }
        let group = DispatchGroup()
        let failures = HandOver(NSLock())
        nonisolated(unsafe) var errors: [String] = []
        for writer in writers {
            group.enter()
            Thread {
                defer { group.leave() }
                for _ in 0..<40 {
                    do { try Self.count(writer.value, "address:1.2.3.4") } catch { failures.value.withLock { errors.append("\(error)") } }
                }
            }.start()
        }
        group.wait()
        #expect(errors.isEmpty, "\(errors.prefix(3))")
        #expect(try store.writer.loginCounter("address:1.2.3.4")?.failures == 80)
    }

    @Test("a node's count waits for another node's uncommitted count, then adds to it")
    func heldOpen() throws {
        let store = try PGTestStore()
        let other = HandOver(try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b")))
        let first = HandOver(store.writer)
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchGroup()
        store.writer.beforeCommit = { held.signal(); release.wait() }
        done.enter()
        Thread { _ = try? Self.count(first.value, "pair:a|1.2.3.4"); done.leave() }.start()
        held.wait()
        done.enter()
        // Without the lock this count would read no row (the first is not committed) and write 1 over the first's 1.
        Thread { _ = try? Self.count(other.value, "pair:a|1.2.3.4"); done.leave() }.start()
        Thread.sleep(forTimeInterval: 0.3)
        release.signal()
        done.wait()
        store.writer.beforeCommit = nil
        #expect(try store.writer.loginCounter("pair:a|1.2.3.4")?.failures == 2)
    }
}
