import Foundation
import JSON
import RoostTestSupport
import Store

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
