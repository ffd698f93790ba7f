import Foundation
import JSON
import RoostTestSupport
import Store
@testable import StorePostgres
import Testing

/// ANALYZE after bulk loads runs off the writer (`PostgresAnalyzer`): a
/// held lock on the table never holds the writer up, and the pass skips it.
@Suite("PostgreSQL engine: ANALYZE off the writer")
struct PostgresAnalyzerTests {
    static func load(_ store: PGTestStore, _ count: Int) throws {
        for start in stride(from: 0, to: count, by: 100) {
            try store.insert("c", (start..<min(count, start + 100)).map { object(#"{"n":\#($0)}"#) })
        }
    }

    /// Polls `done` for up to 20 seconds.
    static func eventually(_ done: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if try done() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    @Test("a table whose ShareUpdateExclusive lock is held: the writer's batches go on, the ANALYZE is skipped, not waited for")
    func lockedTableSkipped() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"n":-1}"#])
        let table = try #require(try store.writer.catalog.layout("c")).table
        let holder = try PGConnection(url: store.url)
        try holder.execute("BEGIN; LOCK TABLE \(table) IN SHARE UPDATE EXCLUSIVE MODE")
        let started = Date()
        try Self.load(store, 1_100)  // crosses 1,000 creates: due
        #expect(try Self.eventually { store.writer.analyzer.finishedCount == 1 }, "the pass ended while the lock is held")
        #expect(Date().timeIntervalSince(started) < 15)
        // The writer still writes while the lock is held.
        try store.insert("c", [#"{"n":5000}"#])
        try holder.execute("COMMIT")
        #expect(try store.ids("c", FindQuery(filter: json("{}"), limit: 2000)).count == 1_102)
    }

    @Test("without a lock the table is analyzed once its creates reach 1,000, on a connection of its own")
    func analyzedOffWriter() throws {
        let store = try PGTestStore()
        try Self.load(store, 999)
        let table = try #require(try store.writer.catalog.layout("c")).table
        Thread.sleep(forTimeInterval: 0.2)
        #expect(store.writer.analyzer.finishedCount == 0, "not due before 1,000 creates")
        try Self.load(store, 1)
        let probe = try PGConnection(url: store.url)
        let analyzed = try Self.eventually {
            try probe.first("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = $1::text", [.text(table)]) { $0.int(0) ?? 0 } ?? 0 > 0
        }
        #expect(analyzed)
        // PostgreSQL counts the ANALYZE as it ends, a moment before the analyzer's thread counts its pass.
        #expect(try Self.eventually { store.writer.analyzer.finishedCount == 1 })
    }
}
