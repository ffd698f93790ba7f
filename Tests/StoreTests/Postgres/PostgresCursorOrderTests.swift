import Foundation
import JSON
import RoostTestSupport
import Store
import StoreSQLite
@testable import StorePostgres
import Testing

/// An unsorted range's order follows the snapshot, never the connection,
/// and cursors keep the order they were made in (review of #42, G2, G3).
@Suite("PostgreSQL engine: unsorted range order and old cursors")
struct PostgresCursorOrderTests {
    /// `n` 0..<30 inserted scrambled (row order is not `n`'s), `n` indexed.
    static let order = (0..<30).map { ($0 * 7) % 30 }

    static func store() throws -> PGTestStore {
        let store = try PGTestStore()
        try store.insert("c", Self.order.map { #"{"_id":"d\#($0)","n":\#($0)}"# })
        try store.writer.applyIndexes([IndexSpec(path: "n", kind: .value)], on: "c")
        return store
    }

    static let range = json(#"{"n":{"$gte":10}}"#)

    @Test("two connections answer an unsorted range alike after one saw an array there that is gone now")
    func sameOrderOnEveryConnection() throws {
        let store = try Self.store()
        let other = try PostgresDocumentReader(url: store.url)
        try store.insert("c", [#"{"_id":"arr","n":[15]}"#])
        // With an array at n: row order (generic conditions), on both.
        let withArray = try store.reader.page("c", FindQuery(filter: Self.range, limit: 5), withTotal: false)
        let rowOrder = Self.order.filter { $0 >= 10 }.map { "d\($0)" }
        #expect(withArray.documents.map { object($0)["_id"]!.stringValue! } == Array(rowOrder.prefix(5)))
        let existing = try store.writer.existingRow(in: "c", id: "arr", scope: .system)
        for result in store.writer.commitBatch([{ w in try w.delete(from: "c", id: "arr", existing: existing, scope: .system) }]) { try result.get() }
        // No array any more: n's order on the connection that remembers the array and on the one that never saw it.
        let first = try store.ids("c", FindQuery(filter: Self.range, limit: 5))
        let second = try other.find("c", FindQuery(filter: Self.range, limit: 5)).map { object($0)["_id"]!.stringValue! }
        #expect(first == ["d10", "d11", "d12", "d13", "d14"])
        #expect(second == first)
        // The row-order cursor made while the array was there: accepted by both, continuing in row order.
        let token = try #require(withArray.next)
        for reader in [store.reader, other] {
            let next = try reader.find("c", FindQuery(filter: Self.range, limit: 5, after: token)).map { object($0)["_id"]!.stringValue! }
            #expect(next == Array(rowOrder.dropFirst(5).prefix(5)))
        }
        // And n's cursor keeps n's order.
        let walk = try other.page("c", FindQuery(filter: Self.range, limit: 5), withTotal: false)
        let after = try store.ids("c", FindQuery(filter: Self.range, limit: 5, after: try #require(walk.next)))
        #expect(after == ["d15", "d16", "d17", "d18", "d19"])
    }

    @Test("a cursor from before migration 8 (NULL number or text) continues where the current one would")
    func nullKeyCursor() throws {
        let store = try PGTestStore()
        try store.insert("c", (0..<12).map { #"{"_id":"s\#($0)","s":"\#(String(format: "%02d", $0))"}"# } + [#"{"_id":"x","s":5}"#])
        let seal = try store.reader.cursorSeal()
        // After the number 5 (its text was NULL), and after "03" (its number was NULL).
        for (limit, left) in [(1, 12), (5, 8)] {
            let sort = "s", count = 4
            let page = try store.reader.page("c", FindQuery(sort: [(sort, true)], limit: limit), withTotal: false)
            let token = try #require(page.next)
            let cursor = try KeysetCursor(token: token, order: "\(sort):1", count: count, seal: seal)
            // What an old cursor held: NULL for the number of a string, or the text of a number.
            var old = cursor.values
            if case .text(let t) = old[2], t.isEmpty { old[2] = .null } else { old[1] = .null }
            let legacy = KeysetCursor(order: "\(sort):1", values: old).token(seal)
            let expected = try store.ids("c", FindQuery(sort: [(sort, true)], limit: 20, after: token))
            #expect(try store.ids("c", FindQuery(sort: [(sort, true)], limit: 20, after: legacy)) == expected)
            #expect(expected.count == left)
        }
    }
}

/// Migration 8 on a database with value indexes (review of #42, G4).
@Suite("PostgreSQL engine: migration 8 keeps the type indexes")
struct PostgresKeyIndexMigrationTests {
    @Test("it drops only the sort-key index; applyIndexes builds it again, the same names as a fresh build")
    func rebuildsSortKeyOnly() throws {
        let store = try PostgresCursorOrderTests.store()
        let db = try PGConnection(url: store.url)
        let fresh = try PostgresIndexTests.indexNames(db, "c")
        #expect(fresh.count == 3)
        try db.transaction { try db.execute(PostgresMigrations.keyIndexes.sql) }
        #expect(try PostgresIndexTests.indexNames(db, "c") == fresh.filter { !$0.hasSuffix("_s") }, "_n and _t untouched")
        try store.writer.applyIndexes([IndexSpec(path: "n", kind: .value)], on: "c")
        #expect(try PostgresIndexTests.indexNames(db, "c") == fresh)
        let statistics = try db.first("SELECT count(*) FROM pg_statistic_ext WHERE stxname ~ '^c_[0-9]+_x[0-9]+_st$'") { $0.int(0) ?? 0 }
        #expect(statistics == 1)
        #expect(try store.ids("c", FindQuery(filter: json(#"{"n":{"$gte":27}}"#), limit: 5)) == ["d27", "d28", "d29"])
    }
}

/// Key conditions exist only for a field's three-column key (review of #42, G5).
@Suite("PostgreSQL engine: key conditions on built-in columns")
struct PostgresKeyConditionGuardTests {
    @Test("_id, _createdAt and _updatedAt (one column each) get none, never a crash")
    func builtInColumns() {
        for field in ["_id", "_createdAt", "_updatedAt"] {
            for op in ["$eq", "$gt", "$lte"] {
                #expect(PostgresKeyConditions.condition(field, op, .string("x"), bind: PostgresDocumentWriter.literal) == nil)
            }
        }
        #expect(PostgresKeyConditions.condition("n", "$eq", .int(1), bind: PostgresDocumentWriter.literal) != nil)
    }
}
