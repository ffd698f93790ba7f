import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Delta sync on PostgreSQL never skips a transaction that commits late:
/// batch A holds its change row open while batch B (another node's writer)
/// tries to commit and a client syncs; then A commits and the client syncs
/// again. With the feed lock the client ends with A and B; with the lock
/// off (test-only) the same schedule loses A, so the test can tell.
@Suite("PostgreSQL engine: delta sync skips no late commit")
struct PostgresDeltaGapTests {
    func run(ordering: FeedOrdering) throws -> (ids: Set<String>, bCommittedWhileAOpen: Bool) {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b"))
        store.writer.feedOrdering = ordering
        other.feedOrdering = ordering
        let clientReader = try PostgresDocumentReader(url: store.url)
        var synced = Set<String>()
        var cursor: FeedCursor?
        func sync() throws {
            repeat {
                let page = try clientReader.delta("c", since: cursor, filter: json("{}"), limit: 100, scope: .system)
                synced.formUnion(page.changed.map { object($0)["_id"]?.stringValue ?? "?" })
                synced.subtract(page.deleted)
                cursor = page.cursor
                if !page.more { break }
            } while true
        }
        try sync()

        let bCommitted = try raceLateCommit(first: store.writer, second: other) { try sync() }
        return (synced, bCommitted)
    }

    @Test("with the feed lock, the client's delta ends with every committed document")
    func lockKeepsDeltaWhole() throws {
        let outcome = try run(ordering: .advisoryLock)
        #expect(!outcome.bCommittedWhileAOpen)
        #expect(outcome.ids == ["warm", "A", "B"])
    }

    @Test("without the lock the same schedule makes delta skip A: the test can tell")
    func withoutLockDeltaSkips() throws {
        let outcome = try run(ordering: .none)
        #expect(outcome.bCommittedWhileAOpen)
        #expect(outcome.ids == ["warm", "B"], "the cursor moved past A's position before A committed")
    }
}
