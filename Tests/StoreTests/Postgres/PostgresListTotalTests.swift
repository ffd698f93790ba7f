import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// A list's `X-Total-Count` on PostgreSQL: counted by the page's own scan
/// (`count(*) OVER ()`) when it can be, by a count of its own otherwise,
/// and in every case equal to that separate count.
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

    @Test("every filter, sort, skip, limit, projection and reader: the total is the separate count")
    func totalsAgree() throws {
        let pg = try store()
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
                            #expect(counted.next == plain.next, "\(label)")
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

    @Test("the page's own scan counts when its condition is the filter's; never with a cursor or a nearest bound")
    func scanCountsWhenItCan() throws {
        let pg = try store()
        func total(_ query: FindQuery, _ scope: AccessScope = .system) throws -> Int? {
            try pg.reader.snapshot { try pg.reader.findInSnapshot("c", query, scope: scope, withTotal: true).total }
        }
        #expect(try total(FindQuery(filter: json(#"{"g":"a"}"#), sort: [("n", true)], limit: 5)) == 30)
        #expect(try total(FindQuery(filter: json(#"{"g":"a"}"#), limit: 5, skip: 29)) == 30)
        #expect(try total(FindQuery(filter: json(#"{"g":"a"}"#), limit: 5), Self.alice) == 15)
        #expect(try total(FindQuery(filter: json(#"{"nope":1}"#), limit: 5)) == 0, "no match, first page: nothing to count")
        // Past the end or limit 0: no row carries the count, so the caller counts.
        #expect(try total(FindQuery(filter: json(#"{"g":"a"}"#), limit: 5, skip: 30)) == nil)
        #expect(try total(FindQuery(filter: json(#"{"g":"a"}"#), limit: 0)) == nil)
        // A keyset page's condition is narrower than the filter.
        let first = try pg.reader.page("c", FindQuery(sort: [("n", true)], limit: 5), withTotal: false)
        #expect(try total(FindQuery(sort: [("n", true)], limit: 5, after: try #require(first.next))) == nil)
        // A nearest-first list through the geo index reads only the rows inside its probe's reach.
        let near = json(#"{"loc":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-122.4,37.8]}}}}"#)
        #expect(try total(FindQuery(filter: near, limit: 5)) == nil)
        #expect(try total(FindQuery(filter: near, limit: 5), Self.alice) != nil, "with an access rule there is no probe")
    }
}
