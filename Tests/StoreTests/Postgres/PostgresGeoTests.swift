import Foundation
import JSON
import RoostTestSupport
import Store
@testable import StorePostgres
import Testing

/// Geo on PostgreSQL against SQLite: the same documents and queries give
/// the same pages (ids in order), counts and keyset chains, with and
/// without a geo index on PostgreSQL (SQLite always has its R*Tree).
@Suite("PostgreSQL engine: geo queries give SQLite's pages")
struct PostgresGeoTests {
    /// Points anywhere, almost-points, clusters with ties, and points on the fixed queries' edges.
    static func documents(seed: UInt64) -> [JSONObject] {
        var generator = MatcherCaseGenerator(rng: SeededGenerator(seed: seed))
        var documents: [JSONObject] = []
        for i in 0..<300 { documents.append(JSONObject([("_id", .string("r\(i)")), ("loc", generator.location())])) }
        for i in 0..<150 {
            // Around San Francisco, within a few kilometres; every fifth one repeats a point (ties).
            let lng = -122.42 + Double(generator.int(2001) - 1000) / 20000, lat = 37.77 + Double(generator.int(2001) - 1000) / 20000
            let point: JSONValue = i % 5 == 4 ? .array([.double(-122.42), .double(37.77)]) : .array([.double(lng), .double(lat)])
            documents.append(JSONObject([("_id", .string("s\(i)")), ("loc", generator.chance(30) ? .object(JSONObject([("type", .string("Point")), ("coordinates", point)])) : point)]))
        }
        let edges: [JSONValue] = [json("[10,10]"), json("[-10,-10]"), json("[10.000000001,0]"), json("[180,90]"), json("[-180,-90]"),
                                  json("[0,1e-400]"), json("[true,0]"), json("[1e300,0]"), json("[-1e308,1e308]"), json("[0,100]"), json("[200,10]")]
        for (i, point) in edges.enumerated() { documents.append(JSONObject([("_id", .string("e\(i)")), ("loc", point)])) }
        return documents
    }

    static let fixedFilters = [
        #"{"loc":{"$geoWithin":{"$box":[[-10,-10],[10,10]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[190,0],[210,20]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[-180,-90],[180,90]]}}}"#,
        #"{"loc":{"$geoWithin":{"$centerSphere":[[-122.42,37.77],0.0005]}}}"#,
        #"{"loc":{"$geoWithin":{"$centerSphere":[[0,0],3.2]}}}"#,
        #"{"loc":{"$nearSphere":[-122.42,37.77]}}"#,
        #"{"loc":{"$nearSphere":[-122.42,37.77],"$maxDistance":1500}}"#,
        #"{"loc":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-122.4,37.8]},"$maxDistance":3000,"$minDistance":200}}}"#,
        #"{"loc":{"$nearSphere":[10,10],"$minDistance":10}}"#,
    ]

    static func randomFilters(seed: UInt64) -> [JSONValue] {
        var generator = MatcherCaseGenerator(rng: SeededGenerator(seed: seed ^ 0x6E0))
        return (0..<40).map { i -> JSONValue in
            switch i % 3 {
            case 0: return .object(JSONObject([("loc", .object(JSONObject([("$geoWithin", .object(JSONObject([("$box", .array([generator.point(), generator.point()]))])))])))]))
            case 1:
                let radius = JSONValue.double(Double(generator.int(100)) / 100)
                return .object(JSONObject([("loc", .object(JSONObject([("$geoWithin", .object(JSONObject([("$centerSphere", .array([generator.point(), radius]))])))])))]))
            default:
                var ops = JSONObject([("$nearSphere", generator.point())])
                if generator.chance(60) { ops["$maxDistance"] = .double(Double(generator.int(5000)) * 1000) }
                if generator.chance(30) { ops["$minDistance"] = .int(Int64(generator.int(2000)) * 1000) }
                return .object(JSONObject([("loc", .object(ops))]))
            }
        }
    }

    @Test("pages, skips, keyset chains and counts agree with SQLite", arguments: [(UInt64(1), true), (UInt64(1), false), (UInt64(0xBEEF), true)])
    func pagesAgree(seed: UInt64, pgIndex: Bool) throws {
        let documents = Self.documents(seed: seed)
        // The reference is SQLite's scan, which FilterMatcher mirrors: SQLite's R*Tree leaves out
        // points a scan finds (a boolean coordinate, which the scan reads as 1 or 0).
        let sqlite = try TestStore()
        try sqlite.insert("c", documents)
        let pg = try PGTestStore()
        try pg.insert("c", documents)
        if pgIndex { try pg.writer.applyIndexes([IndexSpec(path: "loc", kind: .geo)], on: "c") }
        let filters = Self.fixedFilters.map(json) + Self.randomFilters(seed: seed)
        var nonEmpty = 0
        for (n, filter) in filters.enumerated() {
            let all = FindQuery(filter: filter, limit: FindQuery.maxLimit)
            let expected = try sqlite.reader.find("c", all).map(Self.id)
            let matcher = try FilterMatcher(filter)
            #expect(Set(expected) == Set(documents.filter { matcher.matches(.object($0)) }.map { $0["_id"]?.stringValue ?? "?" }), "matcher \(filter.jsonText)")
            let found = try pg.reader.find("c", all).map(Self.id)
            if found != expected {
                let extra = Set(found).subtracting(expected), missing = Set(expected).subtracting(found)
                let show = { (ids: Set<String>) in documents.filter { ids.contains($0["_id"]?.stringValue ?? "") }.prefix(3).map(\.jsonText) }
                Issue.record("\(filter.jsonText): PostgreSQL also \(show(extra)), lacks \(show(missing)); same set: \(extra.isEmpty && missing.isEmpty)")
                continue
            }
            #expect(try pg.reader.count("c", filter: filter) == expected.count, "count \(filter.jsonText)")
            if !expected.isEmpty { nonEmpty += 1 }
            for (limit, skip) in [(5, 0), (7, 3), (1, 12)] {
                let page = FindQuery(filter: filter, limit: limit, skip: skip)
                #expect(try pg.reader.find("c", page).map(Self.id) == (try sqlite.reader.find("c", page).map(Self.id)), "limit \(limit) skip \(skip) \(filter.jsonText)")
                // With `fields` (its names are parameters the nearest probe must not see): the same texts.
                let projected = FindQuery(filter: filter, limit: limit, skip: skip, fields: ["loc"])
                #expect(try pg.reader.find("c", projected) == (try sqlite.reader.find("c", projected)), "fields, limit \(limit) skip \(skip) \(filter.jsonText)")
            }
            // A keyset chain of pages of 6 walks the whole list in SQLite's order (the fixed filters).
            guard n < Self.fixedFilters.count else { continue }
            var chain: [String] = []
            var after: String?
            for _ in 0..<100 {
                let page = try pg.reader.page("c", FindQuery(filter: filter, limit: 6, after: after), withTotal: false)
                chain += page.documents.map(Self.id)
                guard let next = page.next else { break }
                after = next
            }
            #expect(chain == expected, "keyset chain \(filter.jsonText)")
        }
        #expect(nonEmpty >= filters.count / 3, "too few filters matched anything: \(nonEmpty) of \(filters.count)")
    }

    @Test("the shapes not built on PostgreSQL yet answer 400 naming them", arguments: [
        #"{"loc":{"$geoWithin":{"$center":[[0,0],10]}}}"#,
        #"{"loc":{"$geoWithin":{"$polygon":[[0,0],[1,0],[0,1]]}}}"#,
        #"{"loc":{"$geoWithin":{"$geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,1],[0,0]]]}}}}"#,
    ])
    func refusedShapes(_ filter: String) throws {
        let pg = try PGTestStore()
        try pg.insert("c", [#"{"_id":"a","loc":[0,0]}"#])
        #expect(throws: QueryError.self) { try pg.reader.find("c", FindQuery(filter: json(filter))) }
    }

    /// Migration 18 keeps the geo indexes that store `roost_float8` valid only if
    /// every text reads as migration 6's body read it (SQL NULL, -0 and 0 included).
    @Test("roost_float8 after migration 18 answers as migration 6's function did")
    func float8KeepsItsAnswers() throws {
        let store = try PGTestStore()
        let db = try PGConnection(url: store.url)
        let original = try #require(PostgresMigrations.indexes.sql.range(of: "CREATE FUNCTION roost_float8"))
        let body = PostgresMigrations.indexes.sql[original.lowerBound...].replacingOccurrences(of: "roost_float8(", with: "migration6_float8(")
        try db.execute(body)
        let texts = ["1.5", "-0", "0", "1e308", "1E-5", "1e-5", "1e-400", "2.4703282292062328e-324", "4.9e-324", "-1e-310",
                     "0." + String(repeating: "0", count: 300) + "1", "0." + String(repeating: "0", count: 249) + "1",
                     "0." + String(repeating: "0", count: 248) + "1", "-0." + String(repeating: "0", count: 330) + "7",
                     "1" + String(repeating: "0", count: 300), "-123456789012345678901234567890", "48.8566", "2.3522", "1e-00005"]
        for text in texts {
            let same = try db.first("SELECT roost_float8($1::text) IS NOT DISTINCT FROM migration6_float8($1::text), roost_float8($1::text)::text",
                                    [.text(text)]) { ($0.text(0), $0.text(1)) }
            #expect(same?.0 == "t", "\(text.prefix(40))…: \(same?.1 ?? "nil")")
        }
        #expect(try db.first("SELECT roost_float8(NULL) IS NULL") { $0.text(0) } == "t")
        // Numbers as the geo SQL reads them: jsonb's own text of each stored coordinate.
        let stored = try db.first("""
            SELECT count(*) FILTER (WHERE roost_float8(v #>> '{}') IS DISTINCT FROM migration6_float8(v #>> '{}'))
            FROM (SELECT to_jsonb(x / 7.0) AS v FROM generate_series(-2000, 2000) AS x
                  UNION ALL SELECT to_jsonb(('1e-' || x)::numeric) FROM generate_series(1, 400) AS x) AS s
            """) { $0.int(0) }
        #expect(stored == 0)
    }

    @Test("a distance's centre is a float8 parameter; other expressions stay as they are")
    func centreAsFloat8() {
        #expect(PostgresDialect.asFloat8("$12::numeric") == "$12::float8")
        #expect(PostgresDialect.asFloat8("$1::text") == "$1::text")
        #expect(PostgresDialect.asFloat8("p.x") == "p.x")
        #expect(PostgresDialect.asFloat8("($1::numeric)") == "($1::numeric)")
    }

    static func id(_ text: String) -> String { object(text)["_id"]?.stringValue ?? "?" }
}
