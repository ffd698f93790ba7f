import Foundation
import JSON
import Logging
import Store
import StoreSQLite
@testable import StorePostgres
import Testing

/// The feed's upkeep with several nodes on one database, and delta's
/// redaction (the member directory's hidden fields) against SQLite.
@Suite("PostgreSQL engine: feed upkeep across nodes, redaction")
struct PostgresFeedNodesTests {
    @Test("two nodes compacting at once remove each expired row once and leave one horizon")
    func concurrentCompaction() throws {
        let store = try PGTestStore()
        let rows = 2 * ChangeFeed.compactionStep + 500
        let operations: [(PostgresDocumentWriter) throws -> String] = (0..<rows).map { i in
            { w in try w.insert(into: "c", object(#"{"_id":"d\#(i)"}"#)) }
        }
        for result in store.writer.commitBatch(operations) { _ = try result.get() }
        let writers = [HandOver(store.writer), HandOver(try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b")))]
        let removed = HandOver(NSLock()), totals = HandOver(Box())
        let done = DispatchSemaphore(value: 0)
        for writer in writers {
            Thread {
                var mine = 0, failures = 0
                for _ in 0..<100 { // bounded: a few rounds suffice
                    switch writer.value.commitBatch([{ try $0.compactChanges(retention: Int64(0)) }])[0] {
                    case .success(let n): mine += n
                    case .failure: failures += 1
                    }
                    // Done when only the newest row is left.
                    if failures > 20 { break }
                    if (try? writer.value.db.first("SELECT count(*) FROM _changes") { $0.int(0) }) == 1 { break }
                }
                removed.value.withLock { totals.value.removed += mine; totals.value.failures += failures }
                done.signal()
            }.start()
        }
        done.wait(); done.wait()
        #expect(totals.value.failures == 0)
        #expect(totals.value.removed == rows - 1, "each expired row counted once across nodes")
        #expect(try store.reader.feedMeta().horizon == Int64(rows - 1))
        #expect(try store.reader.feedHead() == Int64(rows))
        #expect(try store.reader.changes(after: Int64(rows - 1), limit: 10).changes.map(\.id) == ["d\(rows - 1)"])
    }

    final class Box { var removed = 0, failures = 0 }

    @Test("delta hides the redacted fields except in the caller's own row, as on SQLite")
    func redaction() throws {
        let lite = try TestStore()
        let pg = try PGTestStore()
        let documents = [#"{"_id":"me","name":"Me","email":"me@x","n":[1,{"a":2}]}"#,
                         #"{"_id":"you","email":"you@x","name":"You","phone":"1"}"#,
                         #"{"_id":"none","name":"No email"}"#]
        try lite.insert("people", documents)
        try pg.insert("people", documents)
        let redaction = Redaction(fields: ["email", "phone"], exceptID: "me")
        let scope = AccessScope(principal: .user("me"), level: .shared)
        let first = (try lite.reader.delta("people", since: nil, filter: json("{}"), limit: 10, scope: scope, redaction: redaction),
                     try pg.reader.delta("people", since: nil, filter: json("{}"), limit: 10, scope: scope, redaction: redaction))
        #expect(first.1.changed.map { PostgresFeedTests.normal($0) } == first.0.changed.map { PostgresFeedTests.normal($0) })
        #expect(first.1.changed.count == 3)
        #expect(!first.1.changed[1].contains("you@x") && first.1.changed[0].contains("me@x"))
        try lite.writer.commitBatch([{ try $0.patch(in: "people", id: "you", object(#"{"name":"You2"}"#)) }])[0].get()
        try pg.writer.commitBatch([{ try $0.patch(in: "people", id: "you", object(#"{"name":"You2"}"#)) }])[0].get()
        let next = (try lite.reader.delta("people", since: first.0.cursor, filter: json("{}"), limit: 10, scope: scope, redaction: redaction),
                    try pg.reader.delta("people", since: first.1.cursor, filter: json("{}"), limit: 10, scope: scope, redaction: redaction))
        #expect(next.1.changed.map { PostgresFeedTests.normal($0) } == next.0.changed.map { PostgresFeedTests.normal($0) })
        #expect(next.1.changed.count == 1 && !next.1.changed[0].contains("you@x"))
    }
}
