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

        let aHolding = DispatchSemaphore(value: 0), releaseA = DispatchSemaphore(value: 0), aDone = DispatchSemaphore(value: 0)
        store.writer.beforeCommit = { aHolding.signal(); releaseA.wait() }
        let writerA = HandOver(store.writer)
        let threadA = Thread {
            _ = writerA.value.commitBatch([{ w in try w.insert(into: "c", object(#"{"_id":"A"}"#)) }])
            aDone.signal()
        }
        threadA.start()
        aHolding.wait()
        store.writer.beforeCommit = nil

        let bDone = DispatchSemaphore(value: 0)
        let writerB = HandOver(other)
        let threadB = Thread {
            _ = writerB.value.commitBatch([{ w in try w.insert(into: "c", object(#"{"_id":"B"}"#)) }])
            bDone.signal()
        }
        threadB.start()
        let bCommitted = bDone.wait(timeout: .now() + 1.5) == .success
        try sync() // while A is open
        releaseA.signal()
        aDone.wait()
        if !bCommitted { bDone.wait() }
        try sync()
        try sync()
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
