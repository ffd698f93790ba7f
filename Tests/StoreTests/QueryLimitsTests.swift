import Foundation
import JSON
import Store
import StoreSQLite
import Testing

/// Every `QueryLimits` bound: a filter just inside it runs, one just past it is
/// an invalid query whose message names the limit.
@Suite("Query limits")
struct QueryLimitsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// A filter just inside the limit, and one just past it.
        let inside: String
        let past: String
        let mentions: String
        /// False where SQLite's parser refuses sooner (see `parserDepth`).
        var runs = true
        var testDescription: String { name }
    }

    static func path(_ parts: Int) -> String { Array(repeating: "a", count: parts).joined(separator: ".") }
    static func list(_ n: Int) -> String { "[" + (0..<n).map(String.init).joined(separator: ",") + "]" }
    static func nested(_ depth: Int) -> String {
        var filter = #"{"a":1}"#
        for _ in 0..<depth { filter = #"{"$and":[\#(filter)]}"# }
        return filter
    }
    static func disjunction(_ n: Int) -> String { #"{"$or":["# + (0..<n).map { #"{"a":\#($0)}"# }.joined(separator: ",") + "]}" }

    static let cases: [Case] = [
        Case(name: "path parts", inside: #"{"\#(path(32))":1}"#, past: #"{"\#(path(33))":1}"#, mentions: "32"),
        Case(name: "nesting", inside: nested(31), past: nested(32), mentions: "32", runs: false),
        Case(name: "conditions", inside: disjunction(1000), past: disjunction(1001), mentions: "1000"),
        Case(name: "conditions on long paths", inside: #"{"$and":["# + (0..<31).map { #"{"\#(path(31)).\#($0)":1}"# }.joined(separator: ",") + "]}",
             past: #"{"$and":["# + (0..<32).map { #"{"\#(path(31)).\#($0)":1}"# }.joined(separator: ",") + "]}", mentions: "1000"),
        Case(name: "$all values", inside: #"{"a":{"$all":\#(list(1000))}}"#, past: #"{"a":{"$all":\#(list(1001))}}"#, mentions: "1000"),
        Case(name: "$in values", inside: #"{"a":{"$in":\#(list(10_000))}}"#, past: #"{"a":{"$nin":\#(list(10_001))}}"#, mentions: "10000"),
        Case(name: "$regex length", inside: #"{"a":{"$regex":"\#(String(repeating: "a", count: 1024))"}}"#,
             past: #"{"a":{"$regex":"\#(String(repeating: "a", count: 1025))"}}"#, mentions: "1024"),
        Case(name: "$regex groups", inside: #"{"a":{"$regex":"\#(String(repeating: "(a)", count: 64))"}}"#,
             past: #"{"a":{"$regex":"\#(String(repeating: "(a)", count: 65))"}}"#, mentions: "64"),
    ]

    @Test("inside the limit runs, past it is refused and named", arguments: cases)
    func limit(_ c: Case) throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"1","a":[1,2]}"#])
        if c.runs {
            #expect(store.queryError("c", json(c.inside)) == nil, "\(c.name): \(store.queryError("c", json(c.inside))?.message ?? "")")
        } else {
            _ = try FilterCompiler(dialect: SQLiteDialect()).compile(json(c.inside))
        }
        let start = Date()
        let error = store.queryError("c", json(c.past))
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(error?.kind == .invalid, "\(c.name): \(String(describing: error))")
        #expect(error?.message.contains(c.mentions) == true, "\(c.name): \(error?.message ?? "no error")")
    }

    /// SQLite's parser holds about 100 entries, so it refuses nesting well
    /// inside `maxDepth` (about 4 levels of `$elemMatch`, 12 of `$not`, 23
    /// of `$and`). That is its own recognisable error, a 400 upstream.
    @Test("nesting SQLite's parser cannot take is a recognisable error", arguments: [#"{"$elemMatch":{"a.b":X}}"#, #"{"$not":X}"#])
    func parserDepth(wrapper: String) throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"1","a":[1,2]}"#])
        var condition = #"{"$eq":1}"#
        for _ in 0..<30 { condition = wrapper.replacingOccurrences(of: "X", with: condition) }
        let error = #expect(throws: SQLiteError.self) { try store.reader.count("c", filter: json(#"{"a":\#(condition)}"#)) }
        #expect(error?.isQueryTooDeep == true, "\(String(describing: error))")
    }

    @Test("sort paths have the same part limit")
    func sortPath() throws {
        #expect(try FindQuery.parseSort(json(#"{"\#(Self.path(32))":1}"#)).count == 1)
        #expect(throws: QueryError.self) { try FindQuery.parseSort(json(#"{"\#(Self.path(33))":1}"#)) }
    }

    @Test("the largest filter the limits allow compiles and runs in milliseconds")
    func largestFilter() throws {
        // 31 conditions, each on its own 32-part path through numeric parts (992 of 1000).
        let members = (0..<31).map { i in #""\#(i).\#(Array(repeating: "0", count: 31).joined(separator: "."))":\#(i)"# }
        let filter = json("{" + members.joined(separator: ",") + "}")
        let start = Date()
        let compiled = try FilterCompiler(dialect: SQLiteDialect()).compile(filter)
        #expect(Date().timeIntervalSince(start) < 0.1)
        #expect(compiled.whereSQL.utf8.count < 200_000)
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"1","0":[1,2]}"#])
        let run = Date()
        #expect(try store.idSet("c", filter).isEmpty)
        #expect(Date().timeIntervalSince(run) < 0.5)
    }
}
