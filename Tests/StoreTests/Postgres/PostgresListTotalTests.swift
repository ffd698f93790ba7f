import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// A list's `X-Total-Count` on PostgreSQL: told by a page cut short,
/// counted by the page's own scan (`count(*) OVER ()`) for a shape that
/// matched few rows, by a count of its own otherwise, and in every case
/// equal to that separate count.
@Suite("PostgreSQL engine: a list's total from the page's scan")
struct PostgresListTotalTests {
    static let alice = AccessScope(principal: .user("alice"), level: .private)
    static let bob = AccessScope(principal: .user("bob"), level: .private)

    static let filters = [
        "{}", #"{"g":"a"}"#, #"{"n":{"$gte":5}}"#, #"{"$or":[{"g":"b"},{"n":3}]}"#, #"{"nope":1}"#,
        #"{"loc":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-122.4,37.8]}}}}"#,
        #"{"loc":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-122.4,37.8]},"$maxDistance":3000}}}"#,
        #"{"g":"c","loc":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-122.38,37.8]}}}}"#,
        #"{"loc":{"$geoWithin":{"$centerSphere":[[-122.4,37.8],0.0005]}}}"#,
    ]
    static let sorts: [[(field: String, ascending: Bool)]] = [[], [("n", true)], [("n", false), ("_id", true)]]
    /// (skip, limit): first pages, the whole list, a middle page, the last one, past the end, and limit 0.
    static let windows = [(0, 10), (0, 1000), (5, 7), (85, 10), (200, 10), (0, 0), (3, 0)]

    /// 90 rows, half alice's and half bob's (private: each sees only their own),
    /// with a declared index on `n` and a geo index on `loc` (absent on every fourth row).
    func store() throws -> PGTestStore {
        let pg = try PGTestStore()
        try pg.writer.applyIndexes([IndexSpec(path: "n", kind: .value), IndexSpec(path: "loc", kind: .geo)], on: "c")
        let documents = (0..<90).map { i -> JSONObject in
            var d = JSONObject([("n", .int(Int64(i % 17))), ("g", .string(["a", "b", "c"][i % 3]))])
            if i % 4 != 0 { d["loc"] = .array([.double(-122.4 + Double(i) * 0.002), .double(37.8)]) }
            return d
        }
        try pg.insert("c", Array(documents[..<45]), scope: Self.alice)
        try pg.insert("c", Array(documents[45...]), scope: Self.bob)
        return pg
    }

    /// What a sealed keyset cursor holds (its order and values), as JSON text.
    static func opened(_ token: String, _ seal: CursorSeal) -> String? {
        KeysetCursor.contents(token, seal)?.jsonText
    }

    @Test("every filter, sort, skip, limit, projection and reader: the total is the separate count",
          arguments: [0, 1_000_000])
    func totalsAgree(windowLimit: Int) throws {
        let pg = try store()
        pg.reader.listTotals.windowLimit = windowLimit
        for scope in [AccessScope.system, Self.alice, Self.bob] {
            for filter in Self.filters.map(json) {
                let expected = try pg.reader.count("c", filter: filter, scope: scope)
                for sort in Self.sorts {
                    for (skip, limit) in Self.windows {
                        for fields in [nil, ["n"]] as [[String]?] {
                            let query = FindQuery(filter: filter, sort: sort, limit: limit, skip: skip, fields: fields)
                            let label = "\(scope.principal) \(filter.jsonText) sort \(sort.map(\.field)) skip \(skip) limit \(limit) fields \(fields ?? [])"
                            let counted = try pg.reader.page("c", query, withTotal: true, scope: scope)
                            #expect(counted.total == expected, "\(label)")
                            // Counting changes nothing else about the page.
                            let plain = try pg.reader.page("c", query, withTotal: false, scope: scope)
                            #expect(plain.total == nil, "\(label)")
                            #expect(counted.documents == plain.documents, "\(label)")
                            // Cursors are sealed with a fresh nonce each time: compare what they hold.
                            let seal = try pg.reader.cursorSeal()
                            #expect(counted.next.map { Self.opened($0, seal) } == plain.next.map { Self.opened($0, seal) }, "\(label)")
                        }
                    }
                }
            }
        }
        // The readers' counts differ: a private row is never counted for another user.
        let everyone = try pg.reader.count("c", filter: json("{}"), scope: .system)
        #expect(everyone == 90)
        #expect(try pg.reader.count("c", filter: json("{}"), scope: Self.alice) == 45)
    }

    @Test("keyset pages (counted separately) carry the whole list's total")
    func keysetTotals() throws {
        let pg = try store()
        for scope in [AccessScope.system, Self.bob] {
            for filter in Self.filters.map(json) {
                let expected = try pg.reader.count("c", filter: filter, scope: scope)
                for sort in Self.sorts {
                    var after: String?, pages = 0, seen = 0
                    repeat {
                        let page = try pg.reader.page("c", FindQuery(filter: filter, sort: sort, limit: 7, after: after), withTotal: true, scope: scope)
                        #expect(page.total == expected, "\(filter.jsonText) sort \(sort.map(\.field)) page \(pages)")
                        seen += page.documents.count
                        after = page.next
                        pages += 1
                    } while after != nil && pages < 50
                    #expect(seen == expected, "\(filter.jsonText) sort \(sort.map(\.field)): the pages hold every match")
                }
            }
        }
    }

    @Test("a shape that matched few rows is counted by its page's scan; a cursor, a nearest bound or many matches apart")
    func whereTheScanCounts() throws {
        let pg = try store()
        func countsInScan(_ query: FindQuery, _ scope: AccessScope = .system) throws -> Bool {
            let layout = try #require(try pg.reader.catalog.layout("c"))
            let compiled = try pg.reader.makeCompiler(layout).compile(query.filter)
            return try pg.reader.listStatement(layout, compiled, query, scope: scope, withTotal: true).countsTotal
        }
        let a = FindQuery(filter: json(#"{"g":"a"}"#), sort: [("n", true)], limit: 5)
        #expect(try !countsInScan(a), "a shape not seen yet is counted apart")
        #expect(try pg.reader.page("c", a, withTotal: true).total == 30)
        #expect(try countsInScan(a))
        #expect(try countsInScan(FindQuery(filter: json(#"{"g":"b"}"#), sort: [("n", true)], limit: 5, skip: 29)), "one shape for every value")
        #expect(try !countsInScan(a, Self.alice), "another reader's rule is another shape")
        // Counted in the scan, past the end (no row carries the count) and on a page cut short.
        #expect(try pg.reader.page("c", FindQuery(filter: json(#"{"g":"a"}"#), sort: [("n", true)], limit: 5, skip: 40), withTotal: true).total == 30)
        #expect(try pg.reader.page("c", FindQuery(filter: json(#"{"g":"a"}"#), sort: [("n", true)], limit: 5, skip: 27), withTotal: true).total == 30)
        // A keyset page's condition is narrower than the filter.
        let first = try pg.reader.page("c", FindQuery(limit: 5), withTotal: true)
        #expect(first.total == 90)
        #expect(try countsInScan(FindQuery(limit: 5)))
        #expect(try !countsInScan(FindQuery(limit: 5, after: try #require(first.next))))
        // A nearest-first list through the geo index reads only the rows inside its probe's reach.
        let near = FindQuery(filter: json(#"{"loc":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-122.4,37.8]}}}}"#), limit: 5)
        #expect(try pg.reader.page("c", near, withTotal: true).total == 67)
        #expect(try !countsInScan(near))
        // A shape that matched more rows than the limit is counted apart.
        pg.reader.listTotals.windowLimit = 89
        #expect(try !countsInScan(FindQuery(limit: 5)))
    }

    @Test("the memo of totals: a small last total counts in the scan, a large or unknown one apart; full, it starts again")
    func memo() {
        var totals = PostgresListTotals()
        totals.windowLimit = 10
        let small = PostgresListTotals.shape(table: "c_1", condition: "a", caller: nil)
        let large = PostgresListTotals.shape(table: "c_1", condition: "b", caller: nil)
        #expect(!totals.countsInScan(small))
        totals.record(small, total: 10)
        totals.record(large, total: 11)
        #expect(totals.countsInScan(small))
        #expect(!totals.countsInScan(large))
        totals.record(small, total: 500)
        #expect(!totals.countsInScan(small), "a shape whose matches grew is counted apart again")
        totals.record(small, total: 3)
        for n in 0..<PostgresListTotals.capacity { totals.record(PostgresListTotals.shape(table: "c_2", condition: "\(n)", caller: nil), total: 1) }
        #expect(!totals.countsInScan(small), "forgotten when the memo filled up")
    }

    @Test("private rows: one caller's totals never choose how another caller's list is counted")
    func memoIsPerCaller() {
        var totals = PostgresListTotals()
        let alice = PostgresListTotals.shape(table: "c_1", condition: "private", caller: "alice")
        let bob = PostgresListTotals.shape(table: "c_1", condition: "private", caller: "bob")
        totals.record(alice, total: 3)
        #expect(totals.countsInScan(alice))
        #expect(!totals.countsInScan(bob), "bob's list is counted as a new shape, whatever alice matched")
    }
}
