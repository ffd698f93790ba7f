import Foundation
import JSON
import RoostTestSupport
import Store
@testable import StorePostgres
import Testing

/// Sorted lists, paging and projection: the same documents in the same
/// order on PostgreSQL as on SQLite.
@Suite("PostgreSQL engine: lists in SQLite's order")
struct PostgresListTests {
    static let sorts: [[(field: String, ascending: Bool)]] = [
        [], [("n", true)], [("n", false)], [("g", true), ("n", false)], [("_id", true)], [("_id", false)],
        [("_createdAt", true)], [("o.p", true)], [("a", false), ("b", true)], [("arr", true)], [("t", true)],
    ]

    /// Documents of every type bracket under the sorted fields.
    static func documents() -> [JSONObject] {
        var generator = Generator(rng: SeededGenerator(seed: 0x5071))
        return sortDocuments.map(object) + (0..<120).map { i in
            var d = generator.document(i)
            d["n"] = generator.value()
            d["g"] = .string(["a", "b", "c"][i % 3])
            return d
        }
    }

    func stores() throws -> (TestStore, PGTestStore) {
        let sqlite = try TestStore(), pg = try PGTestStore()
        try sqlite.insert("c", Self.documents())
        try pg.insert("c", Self.documents())
        return (sqlite, pg)
    }

    @Test("every sort, with skip and limit, in the same order")
    func sorted() throws {
        let (sqlite, pg) = try stores()
        for filter in ["{}", #"{"g":"a"}"#, #"{"n":{"$exists":true}}"#] {
            for sort in Self.sorts {
                for (skip, limit) in [(0, 1000), (0, 7), (5, 11), (130, 50)] {
                    let query = FindQuery(filter: json(filter), sort: sort, limit: limit, skip: skip)
                    let expected = try sqlite.reader.find("c", query).map { object($0)["_id"]!.stringValue! }
                    let found = try pg.ids("c", query)
                    if sort.isEmpty {
                        // Unsorted lists are in row order on both: insertion order here.
                        #expect(found == expected, "\(filter) skip \(skip) limit \(limit)")
                    } else {
                        #expect(found == expected, "\(filter) sort \(sort.map { "\($0.field):\($0.ascending)" }) skip \(skip) limit \(limit)")
                    }
                }
            }
        }
    }

    @Test("keyset pages join up to the whole list, for every sort")
    func keyset() throws {
        let (_, pg) = try stores()
        for sort in Self.sorts {
            let whole = try pg.ids("c", FindQuery(sort: sort, limit: 1000))
            var joined: [String] = [], after: String?
            var pages = 0
            repeat {
                let page = try pg.reader.page("c", FindQuery(sort: sort, limit: 13, after: after), withTotal: true)
                #expect(page.total == whole.count)
                joined += page.documents.map { object($0)["_id"]!.stringValue! }
                after = page.next
                pages += 1
            } while after != nil && pages < 100
            #expect(joined == whole, "sort \(sort.map(\.field))")
        }
    }

    @Test("a cursor of another order, or a made-up one, is a 400, never a database error")
    func badCursors() throws {
        let (_, pg) = try stores()
        let page = try pg.reader.page("c", FindQuery(sort: [("n", true)], limit: 5), withTotal: false)
        let token = try #require(page.next)
        #expect(throws: QueryError.self) { try pg.reader.find("c", FindQuery(sort: [("g", true)], limit: 5, after: token)) }
        // The right order and count, but a text where a number belongs.
        let forged = KeysetCursor(order: "n:1", values: [.text("x"), .text("y"), .text("z"), .int(1)]).token(try pg.reader.cursorSeal())
        #expect(throws: QueryError.self) { try pg.reader.find("c", FindQuery(sort: [("n", true)], limit: 5, after: forged)) }
        #expect(throws: QueryError.self) { try pg.reader.find("c", FindQuery(limit: 5, after: "not-a-cursor")) }
    }

    @Test("fields keeps the named top-level fields and _id, as SQLite does")
    func fields() throws {
        let (sqlite, pg) = try stores()
        let query = FindQuery(sort: [("_id", true)], limit: 1000, fields: ["n", "g", "missing"])
        let expected = try sqlite.reader.find("c", query).map(json)
        let found = try pg.reader.find("c", query).map(json)
        #expect(found == expected)
    }

    @Test("a private collection: each user lists and counts exactly the rows their _acl grants, as on SQLite")
    func privateScope() throws {
        let docs = (0..<60).map { i in object(#"{"_id":"p\#(i)","n":\#(i % 7),"s":\#(i),"_acl":{"read":["u\#(i % 3)"]}}"#) }
        let sqlite = try TestStore(), pg = try PGTestStore()
        try sqlite.users(["u0", "u1", "u2"])
        try pg.users(["u0", "u1", "u2"])
        try sqlite.insert("c", docs)
        try pg.insert("c", docs)
        for user in ["u0", "u1", "nobody"] {
            let scope = AccessScope(principal: .user(user), level: .private)
            for filter in ["{}", #"{"n":{"$gt":2}}"#, #"{"_acl.read":"u2"}"#] {
                let query = FindQuery(filter: json(filter), sort: [("n", true), ("s", false)], limit: 1000)
                let expected = try sqlite.reader.find("c", query, scope: scope).map { object($0)["_id"]!.stringValue! }
                let found = try pg.ids("c", query, scope: scope)
                #expect(found == expected, "\(user) \(filter): \(found) vs SQLite \(expected)")
                #expect(try pg.reader.count("c", filter: json(filter), scope: scope) == expected.count)
            }
        }
        #expect(throws: AccessScope.Denial.self) {
            try pg.reader.find("c", FindQuery(), scope: AccessScope(principal: .anonymous, level: .private))
        }
    }
}
