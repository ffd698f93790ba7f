import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// A geo index's points table (`PostgresGeoPoints`) holds exactly the
/// points the exact geo tests read from the documents, whoever filled it
/// and whatever wrote since: its rows are compared with the same
/// expressions computed afresh from the table.
@Suite("PostgreSQL engine: geo points tables")
struct PostgresGeoPointsTests {
    static let loc = IndexSpec(path: "loc", kind: .geo)

    /// The geo index's id on `collection` and whether `_indexes` says its points table is filled.
    static func index(_ db: PGConnection, _ collection: String) throws -> (table: String, id: Int64, points: Bool)? {
        try db.first("""
            SELECT c.id, i.id, i.points FROM _indexes i JOIN _collections c ON c.id = i.collection_id
            WHERE c.name = $1::text AND i.kind = 'geo'
            """, [.text(collection)]) { ("c_\($0.int(0) ?? 0)", $0.int(1) ?? 0, $0.bool(2) ?? false) } ?? nil
    }

    /// Rows of the points table and of the expressions over the documents, each missing from the other; and the table's size.
    static func differences(_ db: PGConnection, _ collection: String) throws -> (missing: Int64, extra: Int64, rows: Int64) {
        let found = try #require(try index(db, collection))
        let tableID = Int64(found.table.dropFirst(2))!
        let points = PostgresGeoPoints.table(tableID: tableID, indexID: found.id)
        let expected = PostgresGeoPoints.points(of: "\(found.table) AS n", path: ["loc"])
        let missing = try db.first("SELECT count(*) FROM (\(expected) EXCEPT SELECT rid, x, y FROM \(points)) AS e") { $0.int(0) ?? -1 } ?? -1
        let extra = try db.first("SELECT count(*) FROM (SELECT rid, x, y FROM \(points) EXCEPT \(expected)) AS e") { $0.int(0) ?? -1 } ?? -1
        let rows = try db.first("SELECT count(*) FROM \(points)") { $0.int(0) ?? -1 } ?? -1
        return (missing, extra, rows)
    }

    @Test("filled from stored documents of every shape, then kept through creates, a batch's held creates, patches and deletes")
    func keptThroughWrites() throws {
        let store = try PGTestStore()
        // Odd values besides points (booleans, strings, GeoJSON, far and tiny numbers), stored before the index.
        let documents = PostgresGeoTests.documents(seed: 5)
        try store.insert("c", documents)
        try store.writer.applyIndexes([Self.loc], on: "c")
        let db = try PGConnection(url: store.url)
        #expect(try Self.index(db, "c")?.points == true)
        var state = try Self.differences(db, "c")
        #expect(state.missing == 0 && state.extra == 0 && state.rows > 300, "\(state)")

        try store.insert("c", (0..<20).map { JSONObject([("_id", .string("n\($0)")), ("loc", .array([.double(Double($0)), .double(-Double($0) / 2)]))]) })
        let held: [(PostgresDocumentWriter) throws -> Void] = [{ writer in
            for i in 0..<5 {
                writer.holdWrites(part: i)
                _ = try writer.insert(into: "c", JSONObject([("_id", .string("h\(i)")), ("loc", .array([.int(Int64(i)), .double(0.5)]))]), scope: .system)
            }
            try writer.settleHeldWrite()
        }]
        for result in store.writer.commitBatch(held) { try result.get() }
        let changes: [(PostgresDocumentWriter) throws -> Void] = ["n1", "n2", "n3", "h1", "r7"].enumerated().map { i, id in
            { writer in
                let existing = try writer.existingRow(in: "c", id: id, scope: .system)
                // A new point, no point at all (null), a GeoJSON point.
                let loc: JSONValue = i % 3 == 0 ? .array([.double(7.25), .double(8.5)]) : i % 3 == 1 ? .null
                    : .object(JSONObject([("type", .string("Point")), ("coordinates", .array([.int(3), .int(4)]))]))
                _ = try writer.patch(in: "c", id: id, JSONObject([("loc", loc)]), existing: existing, scope: .system)
            }
        } + ["n4", "h2", "s3"].map { id in
            { writer in try writer.delete(from: "c", id: id, existing: try writer.existingRow(in: "c", id: id, scope: .system), scope: .system) }
        }
        for result in store.writer.commitBatch(changes) { try result.get() }
        state = try Self.differences(db, "c")
        #expect(state.missing == 0 && state.extra == 0, "\(state)")
        // Lists read the table: a patched point is found where it moved, a deleted one nowhere, as the matcher says.
        let stored = try store.reader.find("c", FindQuery(filter: json("{}"), limit: FindQuery.maxLimit)).map(object)
        for (text, inside) in [(#"{"loc":{"$geoWithin":{"$box":[[7,8],[7.5,9]]}}}"#, ["n1", "h1"]), (#"{"loc":{"$geoWithin":{"$box":[[1.5,0.4],[4.5,0.6]]}}}"#, ["h3", "h4"])] {
            let matcher = try FilterMatcher(json(text))
            let expected = Set(stored.filter { matcher.matches(.object($0)) }.map { $0["_id"]?.stringValue ?? "?" })
            #expect(expected.isSuperset(of: inside) && !expected.contains("h2") && !expected.contains("r7"), "\(expected)")
            #expect(try store.idSet("c", json(text)) == expected, "\(text)")
            #expect(try store.ids("c", FindQuery(filter: json(text), limit: 3)) == stored.map { $0["_id"]?.stringValue ?? "?" }.filter(expected.contains).prefix(3).map { $0 })
        }
    }

    @Test("a geo index without a filled points table (made before migration 19) gets one at start-up; lists answer the same meanwhile")
    func backfilledAtStartUp() throws {
        let store = try PGTestStore()
        try store.insert("c", PostgresGeoTests.documents(seed: 9))
        try store.writer.applyIndexes([Self.loc], on: "c")
        let db = try PGConnection(url: store.url)
        let found = try #require(try Self.index(db, "c"))
        let box = FindQuery(filter: json(#"{"loc":{"$geoWithin":{"$box":[[-180,-90],[180,90]]}}}"#), limit: 20)
        let before = try store.ids("c", box)
        #expect(before.count == 20)
        // As a database migrated to 19 finds it: the flag false, no table.
        for sql in PostgresGeoPoints.dropSQL(table: found.table, tableID: Int64(found.table.dropFirst(2))!, indexID: found.id) { try db.execute(sql) }
        try db.execute("UPDATE _indexes SET points = FALSE")
        #expect(try store.ids("c", box) == before)
        try store.writer.applyIndexes([Self.loc], on: "c")
        #expect(try Self.index(db, "c")?.points == true)
        let state = try Self.differences(db, "c")
        #expect(state.missing == 0 && state.extra == 0 && state.rows > 0, "\(state)")
        #expect(try store.ids("c", box) == before)
    }

    @Test("an index declared at run time fills its points table while writes go on; dropping the index drops it")
    func builtAtRunTime() throws {
        let store = try PGTestStore()
        try store.insert("c", PostgresGeoTests.documents(seed: 11))
        let builder = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "builder"))
        let step = try builder.buildIndexesStep([Self.loc], on: "c", rows: 1000, dropGrace: 0)
        #expect(step.finished)
        let db = try PGConnection(url: store.url)
        let found = try #require(try Self.index(db, "c"))
        #expect(found.points)
        let state = try Self.differences(db, "c")
        #expect(state.missing == 0 && state.extra == 0 && state.rows > 300, "\(state)")
        _ = try builder.buildIndexesStep([], on: "c", rows: 1000, dropGrace: 0)
        let points = PostgresGeoPoints.table(tableID: Int64(found.table.dropFirst(2))!, indexID: found.id)
        #expect(try db.first("SELECT to_regclass($1::text) IS NULL", [.text(points)]) { $0.bool(0) ?? false } == true)
        #expect(try db.first("SELECT count(*) FROM pg_trigger WHERE tgname LIKE $1::text", [.text(points + "%")]) { $0.int(0) ?? -1 } == 0)
    }
}
