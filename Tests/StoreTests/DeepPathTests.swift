import Foundation
import JSON
import RoostTestSupport
import Store
import StoreSQLite
import Testing

/// Long dotted paths through nested arrays and documents: the SQL grows
/// linearly with the path, compiles in milliseconds, and still agrees with
/// the reference matcher at every level.
@Suite("Deep paths")
struct DeepPathTests {
    /// Nested values whose keys are also array positions, so `0` and `1`
    /// in a path mean a field or an element, as MongoDB has it.
    struct Nested {
        var rng: SeededGenerator
        mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

        mutating func value(_ depth: Int) -> JSONValue {
            let scalars: [JSONValue] = [.int(1), .int(2), .string("x"), .null, .bool(true)]
            switch depth >= 5 ? 0 : int(5) {
            case 0, 1: return scalars[int(scalars.count)]
            case 2, 3:
                var o = JSONObject()
                for key in ["a", "b", "0", "1"] where int(3) > 0 { o[key] = value(depth + 1) }
                return .object(o)
            default: return .array((0..<int(4)).map { _ in value(depth + 1) })
            }
        }

        mutating func path() -> String {
            (0..<(1 + int(6))).map { _ in ["a", "b", "0", "1"][int(4)] }.joined(separator: ".")
        }

        mutating func condition() -> JSONValue {
            switch int(9) {
            case 0: return .int(1)
            case 1: return .null
            case 2: return json(#"{"$exists":true}"#)
            case 3: return json(#"{"$exists":false}"#)
            case 4: return json(#"{"$ne":2}"#)
            case 5: return json(#"{"$in":["x",true]}"#)
            case 6: return json(#"{"$size":2}"#)
            case 7: return json(#"{"$type":"object"}"#)
            default: return json(#"{"$gte":2}"#)
            }
        }
    }

    @Test("paths of up to 6 parts agree with the reference, indexed or not", arguments: [UInt64(11), 4242])
    func deepPathsAgree(seed: UInt64) throws {
        var nested = Nested(rng: SeededGenerator(seed: seed))
        let documents = (0..<200).map { i -> JSONObject in
            var o = JSONObject([("_id", .string("d\(i)"))])
            for key in ["a", "b"] { o[key] = nested.value(0) }
            return o
        }
        let store = try TestStore()
        try store.insert("plain", documents)
        try store.index("indexed", ["a.a.a", "a.0.b.1", "b.1.0.a", "a.b.a.b.a"])
        try store.insert("indexed", documents)
        var selective = 0
        for round in 0..<250 {
            // Indexed paths come up often, so the index's own walk (PathValues) is checked too.
            let path = round % 4 == 0 ? ["a.a.a", "a.0.b.1", "b.1.0.a", "a.b.a.b.a"][round / 4 % 4] : nested.path()
            let filter = JSONObject([(path, nested.condition())])
            let expected = Set(documents.filter { Reference.matches($0, filter) }.map { $0["_id"]!.stringValue! })
            if !expected.isEmpty && expected.count < documents.count { selective += 1 }
            #expect(try store.idSet("plain", .object(filter)) == expected, "filter \(filter.jsonText)")
            #expect(try store.idSet("indexed", .object(filter)) == expected, "indexed filter \(filter.jsonText)")
        }
        #expect(selective >= 40, "only \(selective) selective filters")
    }

    /// The SQL of a filter on `parts` copies of `component`, and how long it took to compile.
    static func compiled(_ component: String, _ parts: Int) throws -> (length: Int, seconds: Double) {
        let path = Array(repeating: component, count: parts).joined(separator: ".")
        let start = Date()
        let filter = try FilterCompiler(dialect: SQLiteDialect()).compile(json(#"{"\#(path)":{"$in":[1,"x"]},"\#(path).b":{"$exists":false}}"#))
        return (filter.whereSQL.utf8.count, Date().timeIntervalSince(start))
    }

    @Test("the SQL grows linearly with the path and compiles in milliseconds", arguments: ["a", "0"])
    func sqlGrowsLinearly(component: String) throws {
        let sizes = try [4, 8, 16, 31].map { try Self.compiled(component, $0) }
        for size in sizes { #expect(size.seconds < 0.05, "compiling took \(size.seconds) s") }
        // Linear: twice the parts adds at most about twice as much again.
        let (l8, l16, l31) = (sizes[1].length, sizes[2].length, sizes[3].length)
        #expect(l31 - l16 <= 2 * (l16 - l8) + 200, "SQL lengths \(sizes.map(\.length))")
        #expect(l31 < 16_000, "SQL lengths \(sizes.map(\.length))")
    }

    @Test("nested $elemMatch grows the SQL linearly")
    func elemMatchGrowsLinearly() throws {
        func length(_ depth: Int) throws -> Int {
            var condition = #"{"$eq":1}"#
            for _ in 0..<depth { condition = #"{"$elemMatch":{"a.0.b":\#(condition)}}"# }
            return try FilterCompiler(dialect: SQLiteDialect()).compile(json(#"{"x.0":\#(condition)}"#)).whereSQL.utf8.count
        }
        let (l4, l8, l16) = (try length(4), try length(8), try length(16))
        #expect(l16 - l8 <= 2 * (l8 - l4) + 200, "SQL lengths \(l4), \(l8), \(l16)")
    }

    @Test("a 32-part path runs, and finds what it should, quickly", arguments: ["a", "0"])
    func longPathRuns(component: String) throws {
        // {"a": [{"a": [ … 1 … ]}]}: 32 levels, each a document inside an array.
        var value: JSONValue = .int(1)
        for _ in 0..<31 { value = .array([.string("pad"), .object(JSONObject([(component, value)]))]) }
        let document = JSONObject([("_id", .string("deep")), (component, value)])
        let store = try TestStore()
        try store.insert("deep", [document, JSONObject([("_id", .string("other")), (component, .int(1))])])
        let path = Array(repeating: component, count: 32).joined(separator: ".")
        let start = Date()
        let found = try store.idSet("deep", json(#"{"\#(path)":1}"#))
        #expect(Date().timeIntervalSince(start) < 1)
        // Numeric parts also pick by position ("pad", where the path then ends), and
        // descend into the documents of each array, where "0" is a field name.
        #expect(found == ["deep"])
        #expect(try store.idSet("deep", json(#"{"\#(path)":{"$exists":false}}"#)) == ["other"])
    }
}
