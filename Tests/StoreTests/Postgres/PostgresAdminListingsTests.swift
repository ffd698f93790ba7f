import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// The admin console's listings on PostgreSQL against SQLite's.
///
/// `collectionDetails` reads `_indexes` (migration 6, declared indexes) and
/// `filePage` reads `_files` (migration 4, file rows), tables other parts of
/// the engine create: where this branch lacks them, the test makes them in
/// their migrations' shape first (`IF NOT EXISTS`, a no-op once they exist).
@Suite("PostgreSQL engine: admin listings")
struct PostgresAdminListingsTests {
    static func prepareSharedTables(_ db: PGConnection) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS _indexes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, collection_id bigint NOT NULL,
              path text COLLATE "C" NOT NULL, kind text NOT NULL, UNIQUE (collection_id, path, kind));
            CREATE TABLE IF NOT EXISTS _files (rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text COLLATE "C" NOT NULL UNIQUE,
              created_at text NOT NULL, doc json NOT NULL);
            """)
    }

    @Test("collections with counts and indexes, by name bytewise, without users")
    func collections() throws {
        let sqlite = try TestStore(), postgres = try PGTestStore()
        try Self.prepareSharedTables(postgres.writer.db)
        for (name, n) in [("b", 2), ("a", 3), ("B", 1), ("users", 4), ("é", 1)] {
            let docs = (0..<n).map { #"{"n":\#($0)}"# }
            try sqlite.insert(name, docs)
            try postgres.insert(name, docs)
        }
        try sqlite.index("a", ["n", "where:geo"])
        try postgres.writer.db.run("""
            INSERT INTO _indexes (collection_id, path, kind) SELECT id, p, k FROM _collections, (VALUES ('n', 'value'), ('where', 'geo')) AS v(p, k)
            WHERE name = 'a'
            """)
        func summaries(_ r: any DocumentReading) throws -> String {
            try r.collectionSummaries().map { "\($0.name)=\($0.count)" }.joined(separator: " ")
        }
        func details(_ r: any DocumentReading) throws -> String {
            try r.collectionDetails().map { d in "\(d.name)=\(d.count)[\(d.indexes.map { "\($0.path):\($0.kind)" }.joined(separator: ","))]" }
                .joined(separator: " ")
        }
        #expect(try summaries(postgres.reader) == summaries(sqlite.reader))
        #expect(try summaries(postgres.reader) == "B=1 a=3 b=2 é=1")
        #expect(try details(postgres.reader) == details(sqlite.reader))
        #expect(try details(postgres.reader).contains("a=3[n:value,where:geo]"))
    }

    @Test("a page of files, newest first, with the total")
    func files() throws {
        let store = try PGTestStore()
        try Self.prepareSharedTables(store.writer.db)
        for i in 0..<5 {
            try store.writer.db.run("INSERT INTO _files (id, created_at, doc) VALUES ($1::text, $2::text, $3::json)",
                                    [.text("f\(i)"), .text(Timestamp.now()), .text(#"{"_id":"f\#(i)","size":\#(i)}"#)])
        }
        let page = try store.reader.filePage(limit: 2, skip: 1)
        #expect(page.documents == [#"{"_id":"f3","size":3}"#, #"{"_id":"f2","size":2}"#])
        #expect(page.total == 5)
        #expect(try store.reader.filePage(limit: 10, skip: 5) == ([], 5))
    }

    @Test("the pending-delivery count counts only pending deliveries")
    func pendingCount() throws {
        let store = try PGTestStore()
        try store.writer.inBatch { w in
            try w.saveWebhookEndpoint(PostgresOutboxTests.endpoint("e", ["*"]), keepDisabled: false)
            for _ in 0..<3 { _ = try w.enqueueEvent(type: "t", data: "{}") }
        }
        let due = try store.reader.dueDeliveries(now: PostgresOutboxTests.later, limit: 1)
        try PostgresOutboxTests.record(store.writer, try #require(due.first).rid, 1, .delivered)
        #expect(try store.reader.pendingDeliveryCount() == 2)
    }
}
