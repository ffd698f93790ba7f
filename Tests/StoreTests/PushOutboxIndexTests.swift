import Foundation
import Logging
@testable import StoreSQLite
import Testing

/// Migration 23: the push outbox's indexes hold only the rows their queries
/// read, so recording an attempt moves a row from the due index to the
/// finished one instead of rewriting an entry in three; each query still
/// reads its index (a partial index SQLite cannot prove usable would turn
/// the push thread's every read into a scan of the whole outbox).
@Suite struct PushOutboxIndexTests {
    /// The outbox's reads, as the reader and writer run them, and the index each must use.
    static let reads: [(sql: String, index: String)] = [
        ("SELECT p.rid FROM _push_deliveries p LEFT JOIN _push_devices d ON d.token = p.token AND d.user_id = p.user_id "
            + "WHERE p.status = 'pending' AND p.next_attempt_at <= ?1 ORDER BY p.next_attempt_at, p.rid LIMIT ?2", "_push_deliveries_due"),
        ("SELECT min(next_attempt_at) FROM _push_deliveries WHERE status = 'pending'", "_push_deliveries_due"),
        ("SELECT rid FROM _push_deliveries WHERE kind = ?1 AND status IN ('delivered', 'dead', 'dropped') AND updated_at < ?2 LIMIT ?3",
         "_push_deliveries_finished"),
        ("UPDATE _push_deliveries SET status = 'dropped', updated_at = ?2 WHERE token = ?1 AND status = 'pending'", "_push_deliveries_token"),
    ]

    @Test("the outbox's indexes are partial, and every read uses its index without sorting")
    func plans() throws {
        let store = try TestStore()
        let db = try SQLiteConnection(path: store.path)
        let definitions = try db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '_push_deliveries'")
            .rows { ($0.text(0), $0.text(1)) }
        let sql = Dictionary(uniqueKeysWithValues: definitions)
        #expect(sql["_push_deliveries_due"]?.hasSuffix("WHERE status = 'pending'") == true, "\(sql)")
        #expect(sql["_push_deliveries_finished"]?.hasSuffix("WHERE status IN ('delivered', 'dead', 'dropped')") == true, "\(sql)")
        #expect(sql["_push_deliveries_token"]?.contains("status") == false, "\(sql)")
        for read in Self.reads {
            let plan = try db.prepare("EXPLAIN QUERY PLAN " + read.sql).rows { $0.text(3) }
            #expect(plan.contains { $0.contains("USING INDEX \(read.index)") }, "\(read.sql): \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(read.sql): \(plan)")
        }
    }
}
