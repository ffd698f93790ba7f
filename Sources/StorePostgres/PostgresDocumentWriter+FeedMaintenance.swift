import Foundation
import Store

/// Compaction and the epoch of the feed on PostgreSQL, with
/// `DocumentWriter`'s methods and answers. Every node's compactor may run
/// at once: each deletes only committed rows below the newest (positions of
/// open transactions are above every committed one, see the feed lock),
/// and the horizon only ever moves forward.
extension PostgresDocumentWriter {
    /// Removes up to one step of changes older than `retention` seconds and
    /// moves the horizon past them. Runs as its own short writer job.
    /// - Returns: how many rows went (call again while it is a full step).
    public func compactChanges(retention: Int64) throws -> Int {
        let cutoff = Int64(Date().timeIntervalSince1970 * 1000) - retention * 1000
        // The oldest step's rows by position: bounded work, never a scan of
        // the feed. The newest row stays, however old, as on SQLite.
        let oldest = try db.query("SELECT seq, at FROM _changes WHERE seq < (SELECT max(seq) FROM _changes) ORDER BY seq LIMIT $1::bigint",
                                  [.int(Int64(ChangeFeed.compactionStep))]) { ($0.int(0) ?? 0, $0.int(1) ?? 0) }
        let expired = oldest.prefix { $0.1 < cutoff }
        guard let horizon = expired.last?.0 else { return 0 }
        // Another node's compactor may have removed some of these meanwhile: count what this one removed.
        let removed = try db.first("WITH gone AS (DELETE FROM _changes WHERE seq <= $1::bigint RETURNING 1) SELECT count(*) FROM gone",
                                   [.int(horizon)]) { $0.int(0) ?? 0 } ?? 0
        try db.run("UPDATE _meta SET value = $1::text WHERE key = 'feed_horizon' AND value::bigint < $2::bigint",
                   [.text(String(horizon)), .int(horizon)])
        return Int(removed)
    }

    /// Gives the database a new epoch: every cursor handed out before is
    /// refused from now on, on every node (a restored backup's timeline is another one).
    public func renewFeedEpoch() throws {
        try db.run("UPDATE _meta SET value = left(md5(gen_random_uuid()::text), 16) WHERE key = 'epoch'")
    }
}
