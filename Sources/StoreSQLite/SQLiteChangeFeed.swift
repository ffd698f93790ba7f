import Foundation
import JSON
import Store

/// The change feed's tables on SQLite (see `ChangeFeed`).
extension ChangeFeed {
    static let migration = """
        CREATE TABLE _changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            coll TEXT NOT NULL,
            id TEXT NOT NULL,
            op INTEGER NOT NULL,
            at INTEGER NOT NULL,
            prev_doc TEXT
        );
        CREATE INDEX _changes_coll ON _changes(coll, seq);
        CREATE TABLE _meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO _meta (key, value) VALUES ('epoch', lower(hex(randomblob(8)))), ('feed_horizon', '0');
        """

    /// Migration 10: `_changes` without AUTOINCREMENT (a table copy), and the
    /// key that seals cursors (`CursorSeal`). When the old table was compacted
    /// empty, a marker row (no collection, op 0) at the old sequence keeps the
    /// largest position in the table; no reader reaches it, since every
    /// cursor is at or past the horizon, which equals it.
    static let sequenceMigration: @Sendable (SQLiteConnection) throws -> Void = { db in
        let head = try db.prepare("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = '_changes'), 0)").firstRow { $0.int(0) } ?? 0
        try db.exec("""
            CREATE TABLE _changes_v10 (
                seq INTEGER PRIMARY KEY,
                coll TEXT NOT NULL,
                id TEXT NOT NULL,
                op INTEGER NOT NULL,
                at INTEGER NOT NULL,
                prev_doc TEXT
            );
            INSERT INTO _changes_v10 (seq, coll, id, op, at, prev_doc) SELECT seq, coll, id, op, at, prev_doc FROM _changes ORDER BY seq;
            DROP TABLE _changes;
            ALTER TABLE _changes_v10 RENAME TO _changes;
            CREATE INDEX _changes_coll ON _changes(coll, seq);
            """)
        let newest = try db.prepare("SELECT coalesce(max(seq), 0) FROM _changes").firstRow { $0.int(0) } ?? 0
        if newest < head {
            try db.prepare("INSERT INTO _changes (seq, coll, id, op, at) VALUES (?1, '', '', 0, ?2)").run([.int(head), .int(nowMilliseconds)])
        }
        try CursorSeal.createKey(db)
    }
}

extension DocumentWriter {
    /// Adds the change's feed row in the current transaction.
    func recordChange(_ collection: String, id: String, _ op: ChangeFeed.Operation, previous: JSONObject?) throws {
        try recordChange(collection, id: id, op, previousText: previous?.jsonText)
    }

    /// Adds the change's feed row, with the entity before it as the JSON text that was stored.
    func recordChange(_ collection: String, id: String, _ op: ChangeFeed.Operation, previousText: String?) throws {
        try db.prepare("INSERT INTO _changes (coll, id, op, at, prev_doc) VALUES (?1, ?2, ?3, ?4, ?5)")
            .run([.text(collection), .text(id), .int(op.rawValue), .int(ChangeFeed.nowMilliseconds),
                  previousText.map { .text($0) } ?? .null])
    }

    /// Removes up to one step of changes older than `retention` seconds and
    /// moves the horizon past them. Runs as its own short writer job.
    /// - Returns: how many rows went (call again while it is a full step).
    public func compactChanges(retention: Int64) throws -> Int {
        let cutoff = ChangeFeed.nowMilliseconds - retention * 1000
        // The oldest step's rows by position (the primary key): bounded work
        // whether or not anything is old enough, never a scan of the feed.
        // The newest row stays, however old: it holds the largest position
        // handed out, so SQLite never hands one out again.
        let oldest = try db.prepare("SELECT seq, at FROM _changes WHERE seq < (SELECT max(seq) FROM _changes) ORDER BY seq LIMIT ?1")
            .rows([.int(Int64(ChangeFeed.compactionStep))]) { ($0.int(0), $0.int(1)) }
        let expired = oldest.prefix { $0.1 < cutoff }
        guard let horizon = expired.last?.0 else { return 0 }
        try db.prepare("DELETE FROM _changes WHERE seq <= ?1").run([.int(horizon)])
        try db.prepare("UPDATE _meta SET value = ?1 WHERE key = 'feed_horizon'").run([.text(String(horizon))])
        return expired.count
    }

    /// Gives the database a new epoch: every cursor handed out before is
    /// refused from now on (a restored backup's timeline is another one).
    public func renewFeedEpoch() throws {
        try db.prepare("UPDATE _meta SET value = lower(hex(randomblob(8))) WHERE key = 'epoch'").run()
    }
}
