import Foundation
import Store

/// How a commit orders its change rows against other nodes' commits.
enum FeedOrdering {
    /// Take the feed lock before writing change rows (the only production setting).
    case advisoryLock
    /// No lock: positions are handed out at insert, not at commit (tests only).
    case none
}

/// A change row waiting for its batch's end.
struct PendingChange {
    /// The batch operation that made it (-1 outside `commitBatch`).
    let operation: Int
    let collection: String
    let id: String
    let op: ChangeFeed.Operation
    let at: Int64
    let previousText: String?
}

/// The change feed on PostgreSQL, gap-free for readers that tail it by position.
///
/// A sequence value is handed out when a row is inserted, not when its
/// transaction commits, so without care a reader could read position 6,
/// move its cursor past 5, and miss 5 when its transaction commits later.
/// Each batch therefore writes its change rows last, just before COMMIT,
/// after taking `pg_advisory_xact_lock(feedLockKey)`, which it holds until
/// the commit: the next batch (on any node) takes its positions only after
/// this one committed, so positions become visible in order. The lock is
/// held for the rows' insert and the commit only, not for the batch's work.
extension PostgresDocumentWriter {
    /// The advisory-lock key of the feed ("Roost" + 2).
    static let feedLockKey: Int64 = 0x526F_6F73_7402
    /// The channel commits that wrote change rows notify (`PostgresChangeListener` listens).
    public static let notifyChannel = "roost_changes"

    /// Notes the change's feed row; it is written at the end of the batch.
    func recordChange(_ collection: String, id: String, _ op: ChangeFeed.Operation, previousText: String?) {
        pendingChanges.append(PendingChange(operation: operation, collection: collection, id: id, op: op,
                                            at: Int64(Date().timeIntervalSince1970 * 1000), previousText: previousText))
    }

    /// Takes the feed lock and writes the batch's change rows, deferred: they
    /// go to the server with COMMIT, in one exchange, and run in order there.
    /// Their errors surface at COMMIT, which then fails the batch.
    func writePendingChanges() throws {
        guard !pendingChanges.isEmpty else { return }
        if feedOrdering == .advisoryLock {
            db.runDeferred("SELECT pg_advisory_xact_lock($1::bigint)", [.int(Self.feedLockKey)])
        }
        // Rows of one statement take their positions in the order listed; a
        // statement holds at most 1000 rows (5 parameters each, of 65535).
        var start = pendingChanges.startIndex
        while start < pendingChanges.endIndex {
            let chunk = pendingChanges[start..<min(start + 1000, pendingChanges.endIndex)]
            var params: [SQLValue] = []
            var rows: [String] = []
            for change in chunk {
                let n = params.count
                params += [.text(change.collection), .text(change.id), .int(change.op.rawValue), .int(change.at),
                           change.previousText.map { .text($0) } ?? .null]
                rows.append("($\(n + 1)::text, $\(n + 2)::text, $\(n + 3)::integer, $\(n + 4)::bigint, $\(n + 5)::text)")
            }
            db.runDeferred("INSERT INTO _changes (coll, id, op, at, prev_doc) VALUES " + rows.joined(separator: ", "), params)
            start = chunk.endIndex
        }
        // A wake-up for every node's live hub, delivered at COMMIT (never on a rollback); the feed stays the truth.
        db.runDeferred("SELECT pg_notify($1::text, '')", [.text(Self.notifyChannel)])
        pendingChanges = []
    }
}
