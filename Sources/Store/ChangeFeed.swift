import Foundation
import JSON

/// The change feed: every committed create, update and delete of an entity,
/// in any collection (files and the member directory included), gets the
/// next position in one sequence, written in the same transaction as the
/// change. The writer is a single thread, so positions are handed out in
/// commit order, and a reader sees a whole commit's positions or none.
///
/// `_changes(seq, coll, id, op, at, prev_doc)`: `seq` is the row id, which
/// SQLite hands out as the largest one + 1. Compaction never deletes the
/// newest row, so the largest position ever handed out stays in the table
/// and no position is used twice, not even after compaction or a crash
/// (migration 10 dropped AUTOINCREMENT, whose `sqlite_sequence` read and
/// write cost every change; see `sequenceMigration`).
/// `prev_doc` is the entity as it was before the change (NULL for a
/// create): the tombstone of a delete. From it a later reader decides
/// whether it could see (and match) the entity at its cursor, and so may
/// learn that it changed or went away; and the entity as committed by a
/// change is the `prev_doc` of the entity's next change (or the row now).
public enum ChangeFeed {
    public enum Operation: Int64, Sendable {
        case create = 1, update = 2, delete = 3
    }

    /// Changes older than this many seconds are compacted (`changes_retention`).
    public static let defaultRetention: Int64 = 30 * 24 * 3600
    /// Rows removed per compaction step: one short writer job each.
    public static let compactionStep = 2000

    package static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
