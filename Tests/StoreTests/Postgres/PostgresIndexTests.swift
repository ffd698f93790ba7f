import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Declared indexes on PostgreSQL: `applyIndexes` makes exactly the
/// declared ones, and the planner uses them for the SQL the engine writes.
@Suite("PostgreSQL engine: declared indexes")
struct PostgresIndexTests {
    /// The collection's PostgreSQL index names, sorted.
    static func indexNames(_ db: PGConnection, _ collection: String) throws -> [String] {
        try db.query("""
            SELECT i.indexname FROM pg_indexes AS i JOIN _collections AS c ON i.tablename = 'c_' || c.id
            WHERE c.name = $1::text AND i.indexname ~ '^c_[0-9]+_[xg][0-9]+' ORDER BY 1
            """, [.text(collection)]) { $0.text(0) ?? "" }
    }

    @Test("applyIndexes makes exactly the declared indexes; a second node applying the same finds them done")
    func applyAndDrop() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"a","name":"x","loc":[1,2],"info":{"city":"Oslo"}}"#])
        let db = try PGConnection(url: store.url)
        let specs: Set<IndexSpec> = [IndexSpec(path: "name", kind: .value), IndexSpec(path: "loc", kind: .geo), IndexSpec(path: "info.city", kind: .value)]
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "node-b"))
        // Two nodes at once: the advisory lock lets one build, the other finds the rows.
        let group = DispatchGroup()
        nonisolated(unsafe) var errors: [any Error] = []
        let lock = NSLock()
        for writer in [store.writer, other] {
            group.enter()
            nonisolated(unsafe) let writer = writer
            Thread.detachNewThread {
                do { try writer.applyIndexes(specs, on: "c") } catch { lock.withLock { errors.append(error) } }
                group.leave()
            }
        }
        group.wait()
        #expect(errors.isEmpty, "\(errors)")
        let names = try Self.indexNames(db, "c")
        // name: sort, number and string; info.city: sort only (a dotted filter walks arrays); loc: GiST and far points.
        #expect(names.count == 3 + 1 + 2, "\(names)")
        #expect(try db.first("SELECT count(*) FROM _indexes") { $0.int(0) } == 3)
        #expect(try db.first("SELECT count(*) FROM pg_extension WHERE extname IN ('cube', 'earthdistance')") { $0.int(0) } == 2)

        try store.writer.applyIndexes([IndexSpec(path: "name", kind: .value)], on: "c")
        #expect(try Self.indexNames(db, "c").count == 3)
        try store.writer.applyIndexes([], on: "c")
        #expect(try Self.indexNames(db, "c").isEmpty)
        #expect(try db.first("SELECT count(*) FROM _indexes") { $0.int(0) } == 0)
        store.writer.checkpoint()
        // The documents are untouched and still found.
        #expect(try store.idSet("c", json(#"{"name":"x"}"#)) == ["a"])
    }

    /// 50,000 rows: names with 10 rows each, ranks with 50, points spread over the globe.
    static func bigStore() throws -> (PGTestStore, PGConnection, Int64) {
        let store = try PGTestStore()
        try store.writer.applyIndexes([], on: "big")
        let db = try PGConnection(url: store.url)
        let table = try #require(try db.first("SELECT id FROM _collections WHERE name = 'big'") { $0.int(0) } ?? nil)
        try db.run("""
            INSERT INTO c_\(table) (id, created_at, updated_at, doc)
            SELECT 'g' || i, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z',
                   json_build_object('_id', 'g' || i, 'name', 'n' || (i % 5000), 'rank', i % 1000,
                                     'loc', json_build_array(((i * 7919) % 36000) / 100.0 - 180, ((i * 104729) % 17000) / 100.0 - 85))
            FROM generate_series(1::bigint, 50000) AS i
            """)
        try store.writer.applyIndexes([IndexSpec(path: "name", kind: .value), IndexSpec(path: "rank", kind: .value),
                                       IndexSpec(path: "loc", kind: .geo)], on: "big")
        return (store, db, table)
    }

    struct PlanCase: Sendable, CustomStringConvertible {
        let name: String
        let filter: String
        let sort: [String]
        /// The index (suffix of its name) the plan must use, in the last statement or the probe.
        let index: String
        let expected: Int?
        var description: String { name }

        func query(limit: Int) -> FindQuery {
            let keys = sort.map { $0.hasPrefix("-") ? (field: String($0.dropFirst()), ascending: false) : (field: $0, ascending: true) }
            return FindQuery(filter: json(filter), sort: keys, limit: limit)
        }
    }

    static let planCases = [
        // Equality and ranges on a field without arrays: key conditions on the sort key's index (`PostgresKeyConditions`).
        PlanCase(name: "equality on a string", filter: #"{"name":"n42"}"#, sort: [], index: "_s", expected: 10),
        PlanCase(name: "equality on a number", filter: #"{"rank":7}"#, sort: [], index: "_s", expected: 50),
        PlanCase(name: "$in on strings", filter: #"{"name":{"$in":["n1","n2"]}}"#, sort: [], index: "_t", expected: 20),
        PlanCase(name: "a range of numbers", filter: #"{"rank":{"$gte":998}}"#, sort: [], index: "_s", expected: 100),
        PlanCase(name: "a sorted page", filter: "{}", sort: ["rank"], index: "_s", expected: nil),
        PlanCase(name: "a descending sorted page", filter: "{}", sort: ["-rank"], index: "_s", expected: nil),
        PlanCase(name: "$centerSphere", filter: #"{"loc":{"$geoWithin":{"$centerSphere":[[10,10],0.01]}}}"#, sort: [], index: "gist", expected: nil),
        PlanCase(name: "$box", filter: #"{"loc":{"$geoWithin":{"$box":[[10,10],[11,11]]}}}"#, sort: [], index: "gist", expected: nil),
        PlanCase(name: "$nearSphere", filter: #"{"loc":{"$nearSphere":[10,10]}}"#, sort: [], index: "gist", expected: nil),
        PlanCase(name: "$nearSphere with $maxDistance", filter: #"{"loc":{"$nearSphere":[10,10],"$maxDistance":200000}}"#, sort: [], index: "gist", expected: nil),
    ]

    @Test("at 50,000 rows the plans use the declared indexes, and the answers are unchanged")
    func plansUseIndexes() throws {
        let (store, db, table) = try Self.bigStore()
        let geoIndex = try #require(try db.first("SELECT 'c_' || c.id || '_g' || i.id FROM _indexes AS i JOIN _collections AS c ON c.id = i.collection_id WHERE i.kind = 'geo'") { $0.text(0) } ?? nil)
        for c in Self.planCases {
            let query = c.query(limit: 20)
            let explained = try store.reader.explain("big", query)
            let plans = (explained.objectValue?["statements"]?.arrayValue ?? []).map { s in
                (s.objectValue?["plan"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: "\n")
            }
            let wanted = c.index == "gist" ? geoIndex : "c_\(table)_x"
            // A box holding many points walks the primary key a bounded way (PostgresDocumentReader+BoxWalk),
            // falling back to the geo index past its budget: either is an index, never a scan.
            let boxWalk = c.name == "$box" && plans.contains { $0.contains("c_\(table)_pkey") }
            let uses = boxWalk || plans.contains { plan in plan.contains(wanted) && (c.index == "gist" || plan.contains(c.index + " ")) }
            #expect(uses, "\(c.name): \(plans.joined(separator: "\n---\n"))")
            #expect(!plans.contains { $0.contains("Seq Scan") }, "\(c.name): \(plans.joined(separator: "\n---\n"))")
            if let expected = c.expected {
                #expect(try store.reader.count("big", filter: json(c.filter)) == expected, "\(c.name)")
            }
        }
        // plan(), the filter's plan alone: the string equality through its index.
        #expect(try store.reader.plan("big", filter: json(#"{"name":"n42"}"#)).joined(separator: "\n").contains("c_\(table)_x"))
        #expect(try store.reader.plan("nothing", filter: json(#"{"name":"n42"}"#)).isEmpty)
        // The indexed answers are the scan's: the same pages with the indexes dropped.
        func timed(_ label: String, _ c: PlanCase) throws -> [String] {
            let start = Date()
            defer { print("\(label), \(c.name): \(Int(Date().timeIntervalSince(start) * 1000)) ms") }
            return try store.ids("big", c.query(limit: 30))
        }
        let indexed = try Self.planCases.map { try timed("with indexes", $0) }
        try store.writer.applyIndexes([], on: "big")
        store.reader.timeLimit = 300  // a nearest-first scan measures all 50,000 points on a busy machine
        let scanned = try Self.planCases.map { try timed("without indexes", $0) }
        #expect(indexed == scanned)
    }
}
