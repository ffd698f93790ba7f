import Foundation
import JSON
import Logging
import RoostTestSupport
import Store
@testable import StorePostgres
import Testing

/// The `jsonb` twin of each document (`body`, migration 7): a database
/// written by migration 6 upgrades in place, and documents at the edges of
/// what `jsonb` holds are stored and filtered as their `json` text says.
@Suite("PostgreSQL engine: the jsonb body")
struct PostgresBodyTests {
    /// A database left as migration 6 made it: collection `old` with 20,000
    /// rows (`name` n0…n1999, 10 rows each) and its declared index on `name`
    /// built, as migration 6's builds did, on `json` expressions.
    static func migration6Database() throws -> (url: String, table: Int64) {
        let url = try ThrowawayPostgres.shared().database()
        let db = try PGConnection(url: url)
        try db.execute("CREATE TABLE _migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        for migration in PostgresMigrations.all where migration.version <= 6 {
            try db.execute(migration.sql)
            try db.run("INSERT INTO _migrations (version) VALUES ($1::integer)", [.int(Int64(migration.version))])
        }
        let table = try #require(try db.first("INSERT INTO _collections (name) VALUES ('old') RETURNING id") { $0.int(0) } ?? nil)
        try db.execute("""
            CREATE TABLE c_\(table) (rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text COLLATE "C" NOT NULL UNIQUE,
                created_at text COLLATE "C" NOT NULL, updated_at text COLLATE "C" NOT NULL, doc json NOT NULL);
            INSERT INTO c_\(table) (id, created_at, updated_at, doc)
                SELECT 'd' || i, '2026', '2026', ('{"_id":"d' || i || '","name":"n' || (i % 2000) || '","n":' || i
                    || ',"tags":[{"b":1,"a":2}],"loc":[' || (i % 360 - 180) || ',' || (i % 180 - 90) || ']}')::json
                FROM generate_series(0, 19999) AS i;
            """)
        let index = try #require(try db.first("INSERT INTO _indexes (collection_id, path, kind) VALUES ($1::bigint, 'name', 'value') RETURNING id",
                                              [.int(table)]) { $0.int(0) } ?? nil)
        // Migration 6's string index on `name`, on the `json` text.
        try db.execute("""
            CREATE INDEX c_\(table)_x\(index)_t ON c_\(table) ((CASE json_typeof(doc -> 'name') WHEN 'boolean' THEN (doc -> 'name')::text
                ELSE json_typeof(doc -> 'name') END), (((CASE WHEN json_typeof(doc -> 'name') = 'string' THEN (doc -> 'name') #>> '{}' END) COLLATE "C")))
            """)
        return (url, table)
    }

    @Test("a migration-6 database upgrades: rows written before filter, sort and use the rebuilt index")
    func upgradesFromMigration6() throws {
        let (url, table) = try Self.migration6Database()
        let writer = try PostgresDocumentWriter(url: url, ids: DocumentID(), logger: Logger(label: "upgrade"))
        try writer.migrate()
        try writer.applyIndexes([IndexSpec(path: "name", kind: .value), IndexSpec(path: "loc", kind: .geo)], on: "old")
        let db = try PGConnection(url: url)
        #expect(try db.first("SELECT max(version) FROM _migrations") { $0.int(0) } == Int64(PostgresMigrations.latest))
        #expect(try db.first("SELECT count(*) FROM c_\(table) WHERE body IS NULL") { $0.int(0) } == 0)
        // `_files` too: a delta sync of file rows filters them.
        #expect(try db.first("SELECT count(*) FROM information_schema.columns WHERE table_name = '_files' AND column_name = 'body'") { $0.int(0) } == 1)
        let names = try PostgresIndexTests.indexNames(db, "old")
        #expect(names.count == 3 + 2, "\(names)")
        // The old index is gone; each new one is on `body`.
        let definitions = try db.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'c_\(table)' AND indexname ~ '_[xg][0-9]+'") { $0.text(0) ?? "" }
        #expect(definitions.count == 5 && definitions.allSatisfy { $0.contains("body") }, "\(definitions)")
        #expect(!definitions.contains { $0.contains("json_typeof") }, "\(definitions)")

        let reader = try PostgresDocumentReader(url: url)
        let plan = try reader.plan("old", filter: json(#"{"name":"n42"}"#)).joined(separator: "\n")
        #expect(plan.contains("c_\(table)_x"), "\(plan)")
        #expect(!plan.contains("Seq Scan"), "\(plan)")
        let found = try reader.find("old", FindQuery(filter: json(#"{"name":"n42"}"#), limit: 100)).map { object($0)["_id"]?.stringValue ?? "?" }
        #expect(Set(found) == Set((0..<10).map { "d\(42 + 2000 * $0)" }))
        // Key order still counts for a container, as the stored text says.
        #expect(try reader.count("old", filter: json(#"{"tags":{"b":1,"a":2}}"#)) == 20000)
        #expect(try reader.count("old", filter: json(#"{"tags":{"a":2,"b":1}}"#)) == 0)
        #expect(try reader.count("old", filter: json(#"{"n":{"$gte":19990}}"#)) == 10)
        let sorted = try reader.find("old", FindQuery(filter: json(#"{"name":"n7"}"#), sort: [(field: "n", ascending: false)], limit: 3))
        #expect(sorted.map { object($0)["_id"]?.stringValue ?? "?" } == ["d18007", "d16007", "d14007"])
        // [-180, -90]: every 360th row.
        #expect(try reader.count("old", filter: json(#"{"loc":{"$geoWithin":{"$box":[[-180.5,-90],[-179.5,-89.5]]}}}"#)) == 56)
        // New rows get their body from the same column.
        let store = PGTestStoreWriter(writer)
        try store.insert("old", #"{"_id":"fresh","name":"n42"}"#)
        #expect(try reader.count("old", filter: json(#"{"name":"n42"}"#)) == 11)
    }

    @Test("documents at the edges of jsonb: tiny and huge numbers, escapes, duplicate keys, are stored and filtered as written")
    func edgesOfJSONB() throws {
        let store = try PGTestStore()
        try store.insert("e", [
            #"{"_id":"tiny","n":5e-324,"s":"\u0001\"\\é😀"}"#,
            #"{"_id":"huge","n":-1.7976931348623157e308,"s":"x"}"#,
            #"{"_id":"dup","a":1,"a":2}"#,
            #"{"_id":"deep","o":{"z":1,"a":[1,{"y":null,"b":true}]}}"#,
        ])
        #expect(try store.idSet("e", json(#"{"n":{"$gt":0,"$lt":1e-300}}"#)) == ["tiny"])
        #expect(try store.idSet("e", json(#"{"n":{"$lt":-1e308}}"#)) == ["huge"])
        #expect(try store.idSet("e", json(#"{"s":"\u0001\"\\é😀"}"#)) == ["tiny"])
        #expect(try store.idSet("e", json(#"{"s":{"$regex":"^\u0001\"\\\\é"}}"#)) == ["tiny"])
        // The parser keeps the last value of a duplicate key, and so does the stored text.
        #expect(try store.idSet("e", json(#"{"a":2}"#)) == ["dup"])
        #expect(try store.idSet("e", json(#"{"a":1}"#)).isEmpty)
        let dup = try store.reader.find("e", FindQuery(filter: json(#"{"_id":"dup"}"#)))
        #expect(dup.count == 1 && dup[0].components(separatedBy: #""a":"#).count == 2 && dup[0].contains(#""a":2"#), "\(dup)")
        // Containers compare by their stored text, inside arrays too.
        #expect(try store.idSet("e", json(#"{"o.a":{"y":null,"b":true}}"#)) == ["deep"])
        #expect(try store.idSet("e", json(#"{"o.a":{"b":true,"y":null}}"#)).isEmpty)
        #expect(try store.idSet("e", json(#"{"o":{"z":1,"a":[1,{"y":null,"b":true}]}}"#)) == ["deep"])
        #expect(try store.idSet("e", json(#"{"o.a":{"$elemMatch":{"$eq":{"y":null,"b":true}}}}"#)) == ["deep"])
        #expect(try store.idSet("e", json(#"{"o.a.1.b":true}"#)) == ["deep"])
    }
}

/// Inserts through a writer the test opened itself.
struct PGTestStoreWriter {
    let writer: PostgresDocumentWriter
    init(_ writer: PostgresDocumentWriter) { self.writer = writer }

    func insert(_ collection: String, _ document: String) throws {
        let results = writer.commitBatch([{ w in try w.insert(into: collection, object(document), scope: .system) }])
        for result in results { _ = try result.get() }
    }
}
