import Foundation
import JSON
import Store
import Testing

/// A reference matcher written from MongoDB's documented semantics (legacy
/// dotted-path null rules), evaluated in Swift. The SQL must agree with it.
enum Reference {
    static func matches(_ document: JSONObject, _ filter: JSONObject) -> Bool {
        filter.allSatisfy { key, value in
            switch key {
            case "$and": return value.arrayValue!.allSatisfy { matches(document, $0.objectValue!) }
            case "$or": return value.arrayValue!.contains { matches(document, $0.objectValue!) }
            case "$nor": return !value.arrayValue!.contains { matches(document, $0.objectValue!) }
            default:
                let path = key.split(separator: ".").map(String.init)
                return condition(.object(document), path[...], value, isDocument: true)
            }
        }
    }

    /// The values a condition looks at: `nil` stands for a missing value.
    static func walk(_ value: JSONValue?, _ path: ArraySlice<String>, expand: Bool, isDocument: Bool = false) -> [JSONValue?] {
        guard let key = path.first else {
            guard let value else { return [nil] }
            if expand, case .array(let elements) = value { return [value] + elements }
            return [value]
        }
        let rest = path.dropFirst()
        switch value {
        case nil: return [nil]
        case .object(let o)?: return walk(o[key], rest, expand: expand)
        case .array(let elements)? where !isDocument:
            var out: [JSONValue?] = []
            for case .object(let o) in elements { out += walk(o[key], rest, expand: expand) }
            if !key.isEmpty, key.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let i = Int(key), i < elements.count {
                out += walk(elements[i], rest, expand: rest.isEmpty ? false : expand)
            }
            return out
        default: return [nil]
        }
    }

    static func condition(_ root: JSONValue, _ path: ArraySlice<String>, _ cond: JSONValue, isDocument: Bool) -> Bool {
        if case .object(let ops) = cond, let first = ops.members.first, first.key.hasPrefix("$") {
            return operators(root, path, ops, expand: true, isDocument: isDocument)
        }
        return walk(root, path, expand: true, isDocument: isDocument).contains { equal($0, cond) }
    }

    static func operators(_ root: JSONValue, _ path: ArraySlice<String>, _ ops: JSONObject, expand: Bool, isDocument: Bool) -> Bool {
        let values = walk(root, path, expand: expand, isDocument: isDocument)
        let unexpanded = walk(root, path, expand: false, isDocument: isDocument)
        return ops.allSatisfy { op, arg in
            switch op {
            case "$eq": return values.contains { equal($0, arg) }
            case "$ne": return !values.contains { equal($0, arg) }
            case "$gt", "$gte", "$lt", "$lte": return values.contains { compare($0, op, arg) }
            case "$in": return values.contains { v in arg.arrayValue!.contains { equal(v, $0) } }
            case "$nin": return !values.contains { v in arg.arrayValue!.contains { equal(v, $0) } }
            case "$exists": return unexpanded.contains { $0 != nil } == (arg == .bool(true))
            case "$not": return !operators(root, path, arg.objectValue!, expand: expand, isDocument: isDocument)
            case "$all":
                let items = arg.arrayValue!
                return !items.isEmpty && items.allSatisfy { item in
                    if case .object(let o) = item, o.members.first?.key == "$elemMatch" {
                        return operators(root, path, o, expand: expand, isDocument: isDocument)
                    }
                    return values.contains { equal($0, item) }
                }
            case "$size":
                return unexpanded.contains { if case .array(let a)? = $0 { return a.count == Int(arg.doubleValue!) } else { return false } }
            case "$elemMatch":
                let inner = arg.objectValue!
                let first = inner.members.first?.key ?? ""
                let operatorForm = first.hasPrefix("$") && !["$and", "$or", "$nor"].contains(first)
                return unexpanded.contains { v in
                    guard case .array(let elements)? = v else { return false }
                    return elements.contains { e in
                        if operatorForm { return operators(e, [], inner, expand: false, isDocument: false) }
                        guard case .object(let o) = e else { return false }
                        return matches(o, inner)
                    }
                }
            case "$regex":
                var options: NSRegularExpression.Options = []
                if ops["$options"]?.stringValue?.contains("i") == true { options.insert(.caseInsensitive) }
                let regex = try! NSRegularExpression(pattern: arg.stringValue!, options: options)
                return values.contains {
                    guard case .string(let s)? = $0 else { return false }
                    return regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
                }
            case "$options": return true
            case "$mod":
                let d = Int64(arg.arrayValue![0].doubleValue!), r = Int64(arg.arrayValue![1].doubleValue!)
                return values.contains { v in
                    guard let n = v?.doubleValue else { return false }
                    return Int64(n.rounded(.towardZero)) % d == r
                }
            case "$type":
                let names = arg.arrayValue ?? [arg]
                return values.contains { v in names.contains { typeMatches(v, $0.stringValue!) } }
            default:
                Issue.record("reference matcher does not know \(op)")
                return false
            }
        }
    }

    static func typeMatches(_ v: JSONValue?, _ name: String) -> Bool {
        switch (v, name) {
        case (.int?, "number"), (.double?, "number"), (.string?, "string"), (.bool?, "bool"),
             (.null?, "null"), (.array?, "array"), (.object?, "object"): return true
        default: return false
        }
    }

    static func equal(_ value: JSONValue?, _ literal: JSONValue) -> Bool {
        guard let value else { return literal == .null }
        switch (value, literal) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && equal($0.value, $1.value) }
        default:
            if let x = value.doubleValue, let y = literal.doubleValue { return x == y }
            return false
        }
    }

    static func compare(_ value: JSONValue?, _ op: String, _ literal: JSONValue) -> Bool {
        func holds(_ order: ComparisonResult) -> Bool {
            switch op {
            case "$gt": return order == .orderedDescending
            case "$gte": return order != .orderedAscending
            case "$lt": return order == .orderedAscending
            default: return order != .orderedDescending
            }
        }
        switch (value, literal) {
        case (_, .null): return (op == "$gte" || op == "$lte") && equal(value, .null)
        case (.string(let a)?, .string(let b)):
            return holds(Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending))
        case (.bool(let a)?, .bool(let b)):
            return holds(a == b ? .orderedSame : (!a && b ? .orderedAscending : .orderedDescending))
        default:
            guard let x = value?.doubleValue, let y = literal.doubleValue else { return false }
            return holds(x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending))
        }
    }
}

/// Random documents and filters over a small value pool, so that matches are common.
struct Generator {
    var rng: SeededGenerator

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    static let scalars: [JSONValue] = [
        .int(0), .int(1), .int(2), .int(3), .double(1.5), .double(2.0), .double(-1),
        .string("1"), .string("2"), .string("x"), .string("y"), .string("X"), .string("xy"), .string(""),
        .bool(true), .bool(false), .null,
    ]

    mutating func scalar() -> JSONValue { pick(Self.scalars) }

    mutating func scalarArray() -> JSONValue { .array((0..<int(4)).map { _ in scalar() }) }

    mutating func smallObject() -> JSONValue {
        var o = JSONObject()
        if chance(80) { o["p"] = chance(20) ? scalarArray() : scalar() }
        if chance(60) { o["q"] = chance(40) ? scalarArray() : scalar() }
        return .object(o)
    }

    /// A field value: scalar, array of scalars, object, or array of objects.
    mutating func value(depth: Int = 0) -> JSONValue {
        switch int(10) {
        case 0...3: return scalar()
        case 4, 5: return scalarArray()
        case 6, 7: return depth > 0 ? scalar() : smallObject()
        default: return depth > 0 ? scalarArray() : .array((0..<int(4)).map { _ in smallObject() })
        }
    }

    mutating func document(_ id: Int) -> JSONObject {
        var o = JSONObject([("_id", .string("d\(id)"))])
        for field in ["a", "b", "o", "arr", "t"] where chance(85) {
            switch field {
            case "o": o[field] = chance(75) ? smallObject() : value()
            case "arr": o[field] = chance(70) ? .array((0..<int(4)).map { _ in smallObject() }) : value()
            case "t": o[field] = chance(80) ? .array((0..<int(4)).map { _ in .string(pick(["red", "blue", "x", "1"])) }) : value()
            default: o[field] = value()
            }
        }
        return o
    }

    static let paths = ["a", "b", "o", "o.p", "o.q", "arr", "arr.p", "arr.q", "arr.0", "arr.0.p", "arr.1.q",
                        "t", "t.0", "t.2", "a.p", "a.1", "nope", "o.nope.p"]

    mutating func literal() -> JSONValue {
        switch int(12) {
        case 0: return scalarArray()
        case 1: return smallObject()
        default: return scalar()
        }
    }

    mutating func comparable() -> JSONValue {
        pick([.int(0), .int(1), .int(2), .double(1.5), .string("1"), .string("x"), .string("X"), .bool(false), .bool(true), .null])
    }

    mutating func operatorObject(depth: Int, allowNot: Bool = true) -> JSONObject {
        var ops = JSONObject()
        for _ in 0..<(1 + int(2)) {
            switch int(16) {
            case 0: ops["$eq"] = literal()
            case 1: ops["$ne"] = literal()
            case 2: ops["$gt"] = comparable()
            case 3: ops["$gte"] = comparable()
            case 4: ops["$lt"] = comparable()
            case 5: ops["$lte"] = comparable()
            case 6: ops["$in"] = .array((0..<int(4)).map { _ in literal() })
            case 7: ops["$nin"] = .array((0..<int(3)).map { _ in literal() })
            case 8: ops["$exists"] = .bool(chance(50))
            case 9 where allowNot && depth < 2: ops["$not"] = .object(operatorObject(depth: depth + 1, allowNot: false))
            case 10: ops["$all"] = .array((0..<int(3)).map { _ in chance(80) ? scalar() : scalarArray() })
            case 11: ops["$size"] = .int(Int64(int(4)))
            case 12 where depth < 2:
                if chance(50) {
                    ops["$elemMatch"] = .object(operatorObject(depth: depth + 1))
                } else {
                    ops["$elemMatch"] = .object(filter(depth: depth + 1, paths: ["p", "q"]))
                }
            case 13:
                ops["$regex"] = .string(pick(["^x", "y$", "^1", "X", "^$", "r.d"]))
                if chance(40) { ops["$options"] = .string("i") }
            case 14: ops["$mod"] = .array([.int(Int64(pick([2, 3]))), .int(Int64(int(2)))])
            default:
                let names = ["number", "string", "bool", "null", "array", "object"]
                ops["$type"] = chance(70) ? .string(pick(names)) : .array([.string(pick(names)), .string(pick(names))])
            }
        }
        return ops
    }

    mutating func filter(depth: Int = 0, paths: [String] = Generator.paths) -> JSONObject {
        var f = JSONObject()
        for _ in 0..<(1 + int(2)) {
            if depth < 2 && chance(20) {
                let op = pick(["$and", "$or", "$nor"])
                f[op] = .array((0..<(1 + int(3))).map { _ in .object(filter(depth: depth + 1, paths: paths)) })
            } else {
                let path = pick(paths)
                f[path] = chance(35) ? literal() : .object(operatorObject(depth: depth))
            }
        }
        return f
    }
}

@Suite("Randomised equivalence with a reference matcher")
struct RandomEquivalenceTests {
    static let valueIndexes = ["a", "b", "o", "o.p", "o.q", "arr", "arr.p", "arr.q", "arr.0", "arr.0.p", "arr.1.q",
                               "t", "t.0", "t.2", "a.p", "a.1", "p", "q"]

    @Test("SQL, indexed SQL and the reference agree", arguments: [UInt64(0x5EED), 20_240_601, 7])
    func equivalence(seed: UInt64) throws {
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let documents = (0..<300).map { generator.document($0) }
        let store = try TestStore()
        try store.insert("plain", documents)
        try store.insert("indexed", documents)
        try store.index("indexed", Self.valueIndexes)
        // Stored documents gain _createdAt/_updatedAt; the reference sees the client's fields.
        var mismatches = 0
        var nonEmpty = 0
        for _ in 0..<200 {
            let filter = generator.filter()
            let expected = Set(documents.filter { Reference.matches($0, filter) }.map { $0["_id"]!.stringValue! })
            if !expected.isEmpty && expected.count < documents.count { nonEmpty += 1 }
            let plain = try store.idSet("plain", .object(filter))
            let indexed = try store.idSet("indexed", .object(filter))
            let counted = try store.reader.count("indexed", filter: .object(filter))
            #expect(counted == expected.count, "count of \(filter.jsonText)")
            if plain != expected || indexed != expected {
                mismatches += 1
                if mismatches <= 8 {
                    let doc = documents.first { d in
                        let id = d["_id"]!.stringValue!
                        return expected.contains(id) != plain.contains(id) || expected.contains(id) != indexed.contains(id)
                    }
                    Issue.record("""
                        filter \(filter.jsonText)
                          reference \(expected.count), plain \(plain.count), indexed \(indexed.count)
                          first differing document: \(doc?.jsonText ?? "-") \
                        reference=\(doc.map { expected.contains($0["_id"]!.stringValue!) } ?? false) \
                        plain=\(doc.map { plain.contains($0["_id"]!.stringValue!) } ?? false) \
                        indexed=\(doc.map { indexed.contains($0["_id"]!.stringValue!) } ?? false)
                        """)
                }
            }
        }
        #expect(mismatches == 0)
        // The generator must exercise selective filters, not just all-or-nothing ones.
        #expect(nonEmpty >= 60, "only \(nonEmpty) selective filters")
    }

    /// Replaces, patches and deletes move index entries by their keys; none
    /// may be left behind or missing. The rewritten collection's index must
    /// hold exactly what a fresh insert of the final documents writes, and
    /// its queries must still agree with the reference.
    @Test("rewrites leave the index exactly as a fresh insert would", arguments: [UInt64(0xD1FF), 99])
    func rewritesKeepTheIndexExact(seed: UInt64) throws {
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let store = try TestStore()
        try store.index("rewritten", Self.valueIndexes + ["loc:geo"])
        try store.index("fresh", Self.valueIndexes + ["loc:geo"])
        var final: [String: JSONObject] = [:]
        var first = (0..<150).map { generator.document($0) }
        for i in first.indices where generator.chance(50) { first[i]["loc"] = .array([.double(Double(i)), .double(1)]) }
        try store.insert("rewritten", first)
        for document in first { final[document["_id"]!.stringValue!] = document }
        for round in 0..<300 {
            let id = "d\(generator.int(150))"
            var body = generator.document(0)
            body["_id"] = nil
            if generator.chance(30) { body["loc"] = .array([.double(Double(round)), .double(2)]) }
            let operation: (DocumentWriter) throws -> String
            switch generator.int(3) {
            case 0:
                operation = { [body] in try $0.replace(in: "rewritten", id: id, body).text }
                body["_id"] = .string(id)
                final[id] = body
            case 1:
                guard let existing = final[id] else { continue }
                operation = { [body] in try $0.patch(in: "rewritten", id: id, body) }
                var merged = JSONValue.object(existing).mergePatched(with: .object(body)).objectValue ?? JSONObject()
                merged["_id"] = .string(id)
                final[id] = merged
            default:
                guard final[id] != nil else { continue }
                operation = { try $0.delete(from: "rewritten", id: id); return "" }
                final[id] = nil
            }
            for result in store.writer.commitBatch([operation]) { _ = try result.get() }
        }
        try store.insert("fresh", Array(final.values))

        let db = try SQLiteConnection(path: store.path, readOnly: true)
        /// Every index entry of `collection` as text, with its document's `_id`;
        /// numbers print alike whether SQLite holds them as integer or real.
        func entries(_ collection: String) throws -> [String] {
            let table = try db.prepare("SELECT id FROM _collections WHERE name = ?1").firstRow([.text(collection)]) { $0.int(0) } ?? -1
            let geo = try db.prepare("SELECT id FROM _indexes WHERE collection_id = ?1 AND kind = 'geo'").firstRow([.int(table)]) { $0.int(0) } ?? -1
            return try db.prepare("""
                SELECT x.path || '|' || x.k || '|' ||
                       CASE WHEN typeof(x.v) IN ('integer', 'real') THEN printf('%.17g', x.v) ELSE quote(x.v) END || '|' || c.id
                  FROM x_\(table) AS x JOIN c_\(table) AS c ON c.rid = x.rid
                UNION ALL SELECT 'orphan entry ' || rid FROM x_\(table) WHERE k <> 0 AND rid NOT IN (SELECT rid FROM c_\(table))
                UNION ALL SELECT 'point ' || c.id || ' ' || g.minX || ',' || g.minY FROM g_\(table)_\(geo) AS g JOIN c_\(table) AS c ON c.rid = g.id
                UNION ALL SELECT 'orphan point ' || id FROM g_\(table)_\(geo) WHERE id NOT IN (SELECT rid FROM c_\(table))
                """).rows { $0.text(0) }.sorted()
        }
        #expect(try entries("rewritten") == entries("fresh"))
        // Multikey marks stay once written, so the rewritten collection may hold more, never fewer.
        func multikeyPaths(_ collection: String) throws -> Set<String> {
            let table = try db.prepare("SELECT id FROM _collections WHERE name = ?1").firstRow([.text(collection)]) { $0.int(0) } ?? -1
            return Set(try db.prepare("SELECT path FROM x_\(table) WHERE k = 0").rows { $0.text(0) })
        }
        #expect(!(try multikeyPaths("fresh")).isEmpty)
        #expect(try multikeyPaths("fresh").isSubset(of: multikeyPaths("rewritten")))
        #expect(try entries("fresh").contains { $0.hasPrefix("point ") })
        #expect(try entries("fresh").count > 300)

        let documents = Array(final.values)
        for _ in 0..<100 {
            let filter = generator.filter()
            let expected = Set(documents.filter { Reference.matches($0, filter) }.map { $0["_id"]!.stringValue! })
            #expect(try store.idSet("rewritten", .object(filter)) == expected, "filter \(filter.jsonText)")
        }
        let box = json(#"{"loc":{"$geoWithin":{"$box":[[-1,-1],[1000,1000]]}}}"#)
        let withPoints = Set(documents.filter { $0["loc"] != nil }.map { $0["_id"]!.stringValue! })
        #expect(try store.idSet("rewritten", box) == withPoints)
    }
}
