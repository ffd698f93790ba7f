import Foundation
import JSON
import Logging
@testable import Store
@testable import StoreSQLite
import Testing

/// `skip` pages of every row in row order (`ListPlan.Strategy.rowPage`): the
/// skipped rows are counted off the row-id index, and migration 22 gives an
/// older database that index.
@Suite struct RowPageTests {
    func explain(_ store: TestStore, _ query: FindQuery, scope: AccessScope = .system) throws -> (strategy: String, lines: [String]) {
        let plan = try store.reader.explain("c", query, scope: scope)
        let lines = plan.objectValue?["statements"]?.arrayValue?.flatMap { $0.objectValue?["plan"]?.arrayValue ?? [] }.compactMap(\.stringValue) ?? []
        return (plan.objectValue?["strategy"]?.stringValue ?? "", lines)
    }

    @Test("a skip page of every row reads the row-id index, and equals the scan's page")
    func plan() throws {
        let store = try TestStore()
        try store.users(["u0"])
        try store.insert("c", (0..<500).map { #"{"i":\#($0),"_acl":{"read":["u0"]}}"# })
        let all = try store.find("c", "{}").map { Int($0["i"]!.doubleValue!) }
        #expect(all == Array(0..<500))
        for (skip, limit) in [(1, 20), (250, 20), (480, 50), (499, 1), (500, 20), (10_000, 20)] {
            let page = try store.find("c", "{}", limit: limit, skip: skip).map { Int($0["i"]!.doubleValue!) }
            #expect(page == Array(all.dropFirst(skip).prefix(limit)), "skip \(skip)")
        }
        let deep = try explain(store, FindQuery(limit: 20, skip: 250))
        #expect(deep.strategy == "row-index-page")
        #expect(deep.lines.contains { $0.contains("COVERING INDEX c_1_rid") }, "\(deep.lines)")
        // The first page, a filter, a sort, or rows the caller may not all read keep the scan.
        let others = [FindQuery(limit: 20), FindQuery(filter: json(#"{"i":{"$gt":3}}"#), limit: 20, skip: 5),
                      FindQuery(sort: [("i", false)], limit: 20, skip: 5)]
        for query in others { #expect(try explain(store, query).strategy == "scan") }
        let private_ = AccessScope(principal: .user("u0"), level: .private)
        #expect(try explain(store, FindQuery(limit: 20, skip: 5), scope: private_).strategy == "scan")
    }

    @Test("migration 22 gives a database without row-id indexes one per collection")
    func migration() throws {
        let store = try TestStore()
        try store.insert("c", (0..<50).map { #"{"i":\#($0)}"# })
        try store.insert("d", [#"{"i":0}"#])
        let db = try SQLiteConnection(path: store.path)
        try db.exec("DROP INDEX c_1_rid; DROP INDEX c_2_rid; DELETE FROM _migrations WHERE version >= 22")
        #expect(try db.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE 'c\\__\\_rid' ESCAPE '\\'").firstRow { $0.int(0) } == 0)
        // Without the index, the plan still answers right (SQLite scans the table).
        #expect(try store.find("c", "{}", limit: 5, skip: 40).map { Int($0["i"]!.doubleValue!) } == Array(40..<45))
        #expect(try Migrations.apply(on: db, logger: Logger(label: "test")) == Migrations.all.last!.version)
        let names = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%\\_rid' ESCAPE '\\' ORDER BY name").rows { $0.text(0) }
        #expect(names == ["c_1_rid", "c_2_rid"])
        #expect(try store.find("c", "{}", limit: 5, skip: 40).map { Int($0["i"]!.doubleValue!) } == Array(40..<45))
    }
}
