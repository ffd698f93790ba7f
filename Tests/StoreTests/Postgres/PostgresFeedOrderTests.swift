import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// The change feed on PostgreSQL stays gap-free for a reader that tails it
/// by position, even when a transaction that took an earlier position
/// commits after a later one (sequence values are handed out at insert, not
/// at commit).
@Suite("PostgreSQL engine: change feed order")
struct PostgresFeedOrderTests {
    /// What a tailing reader saw: every id, in the order it saw them.
    final class Tail: @unchecked Sendable {
        let reader: PostgresDocumentReader
        var position: Int64 = 0
        var seen: [String] = []
        init(_ reader: PostgresDocumentReader) { self.reader = reader }
        func poll() throws {
            let batch = try reader.changes(after: position, limit: 100)
            seen += batch.changes.map(\.id)
            if let last = batch.changes.last { position = last.seq }
        }
    }

    /// Holds batch A open after it wrote its change row, commits batch B
    /// from another writer meanwhile, polls a tailing reader throughout,
    /// then lets A commit. Returns what the reader saw.
    func run(ordering: FeedOrdering) throws -> (seen: [String], bCommittedWhileAOpen: Bool) {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b"))
        store.writer.feedOrdering = ordering
        other.feedOrdering = ordering
        let tail = Tail(store.reader)
        try tail.poll()

        let bCommitted = try raceLateCommit(first: store.writer, second: other) { try tail.poll() }
        return (tail.seen, bCommitted)
    }

    @Test("with the feed lock, a late commit is not skipped: B waits for A, the reader sees both in order")
    func lockKeepsOrder() throws {
        let outcome = try run(ordering: .advisoryLock)
        #expect(!outcome.bCommittedWhileAOpen, "B committed while A held an earlier position open")
        #expect(outcome.seen == ["warm", "A", "B"])
    }

    @Test("without the lock the same schedule loses A: the test can tell")
    func withoutLockTheGapShows() throws {
        let outcome = try run(ordering: .none)
        #expect(outcome.bCommittedWhileAOpen)
        #expect(outcome.seen == ["warm", "B"], "the reader moved past A's position before A committed")
    }
}
