import Foundation
import JSON
import RoostTestSupport
import Store

/// Random documents and filters drawn from the whole grammar `FilterCompiler`
/// accepts, over small value pools mixing types (so matches are common and
/// every type bracket meets every other): integers at the edges of 64 bits
/// and of a double's precision, reals, strings that differ only in Unicode
/// normalisation or case, strings holding JSON text, nulls, missing fields,
/// nested arrays, arrays of documents, points in every shape the geo
/// operators read, regexes with every option.
struct MatcherCaseGenerator {
    var rng: SeededGenerator

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    static let scalars: [JSONValue] = [
        .int(0), .int(1), .int(2), .int(3), .int(-1), .int(9_007_199_254_740_993), .int(.max), .int(.min),
        .double(1.5), .double(2.0), .double(-0.5), .double(0.1), .double(1e20), .double(9_007_199_254_740_992.0), .double(-1e-7),
        .string("x"), .string("X"), .string("xy"), .string(""), .string("1"), .string("null"), .string("red"),
        .string("\u{e9}"), .string("e\u{301}"), .string("É"), .string("ß"), .string("a\nb"), .string("日本"),
        .string(#"{"p":1}"#), .string("[1,2]"), .string("true"),
        .bool(true), .bool(false), .null,
    ]

    mutating func scalar() -> JSONValue {
        if chance(8) { return .double(Double(int(2001) - 1000) / 8) }
        return pick(Self.scalars)
    }

    mutating func scalarArray(_ depth: Int = 0) -> JSONValue {
        .array((0..<int(4)).map { _ in depth < 1 && chance(10) ? scalarArray(depth + 1) : scalar() })
    }

    mutating func smallObject(_ depth: Int = 0) -> JSONValue {
        var o = JSONObject()
        if chance(75) { o["p"] = chance(25) ? scalarArray() : scalar() }
        if chance(55) { o["q"] = chance(35) ? scalarArray() : scalar() }
        if depth < 1 && chance(20) { o["r"] = chance(50) ? smallObject(depth + 1) : .array([smallObject(depth + 1)]) }
        if chance(8) { o["0"] = scalar() }
        return .object(o)
    }

    mutating func value() -> JSONValue {
        switch int(10) {
        case 0...3: return scalar()
        case 4, 5: return scalarArray()
        case 6, 7: return smallObject()
        default: return .array((0..<int(4)).map { _ in chance(85) ? smallObject() : scalar() })
        }
    }

    mutating func coordinate(_ range: Double) -> JSONValue {
        chance(30) ? .int(Int64(int(Int(range) * 2 + 1)) - Int64(range)) : .double((Double(int(20001)) / 10000 - 1) * range)
    }

    /// A point as an array, a GeoJSON object, or something almost a point.
    mutating func location() -> JSONValue {
        let pair: JSONValue = .array([coordinate(180), coordinate(90)])
        switch int(10) {
        case 0...4: return pair
        case 5, 6: return .object(JSONObject([("type", .string("Point")), ("coordinates", pair)]))
        case 7: return .array([pick([.bool(true), .int(1), .string("1"), .null]), coordinate(90)])
        case 8: return .object(JSONObject([("coordinates", .object(JSONObject([("0", .int(1)), ("1", .int(2))])))]))
        default: return .array([coordinate(180), coordinate(90), .int(7)])
        }
    }

    mutating func document(_ id: Int) -> JSONObject {
        var o = JSONObject([("_id", .string("d\(id)"))])
        for field in ["a", "b", "o", "arr", "t", "loc", "n"] where chance(85) {
            switch field {
            case "o": o[field] = chance(75) ? smallObject() : value()
            case "arr": o[field] = chance(70) ? .array((0..<int(4)).map { _ in smallObject() }) : value()
            case "t": o[field] = chance(80) ? .array((0..<int(4)).map { _ in .string(pick(["red", "Red", "blue", "x", "1", "é", "e\u{301}"])) }) : value()
            case "loc": o[field] = chance(85) ? location() : value()
            case "n": o[field] = chance(80) ? .int(Int64(int(41)) - 20) : scalar()
            default: o[field] = value()
            }
        }
        return o
    }

    static let paths = ["a", "b", "o", "o.p", "o.q", "o.r.p", "o.0", "arr", "arr.p", "arr.q", "arr.r.p", "arr.0", "arr.0.p",
                        "arr.1.q", "t", "t.0", "t.2", "a.p", "a.1", "a.0.0", "nope", "o.nope.p", "_id", "n", "loc", "loc.0",
                        "loc.coordinates", "loc.coordinates.1", "arr.p.0"]

    mutating func literal() -> JSONValue {
        switch int(14) {
        case 0: return scalarArray()
        case 1: return smallObject()
        case 2: return .string("d\(int(40))")
        default: return scalar()
        }
    }

    mutating func comparable() -> JSONValue {
        chance(15) ? .int(Int64(int(41)) - 20) : pick([.int(0), .int(1), .int(2), .double(1.5), .double(-0.5), .int(.max), .double(9_007_199_254_740_992.0),
                                                     .int(9_007_199_254_740_993), .string("1"), .string("x"), .string("X"), .string("\u{e9}"), .string("e"),
                                                     .bool(false), .bool(true), .null])
    }

    mutating func regex() -> (JSONValue, JSONValue?) {
        let pattern = pick(["^x", "y$", "^1", "X", "^$", "r.d", "^\u{e9}", "e\u{301}", "^.$", "^a.b$", "^b", "(?i)RED", "\\d", "\\w+",
                            "^日", "x # comment", "[[:upper:]]", "\\{\"p\"", "é|ß"])
        let options = chance(50) ? JSONValue.string(String((0..<int(3)).map { _ in pick(["i", "m", "s", "x"] as [Character]) })) : nil
        return (.string(pattern), options)
    }

    mutating func point() -> JSONValue {
        let p: JSONValue = .array([coordinate(180), coordinate(90)])
        return chance(70) ? p : .object(JSONObject([("type", .string("Point")), ("coordinates", p)]))
    }

    mutating func ring() -> JSONValue {
        let cx = Double(int(300)) - 150, cy = Double(int(140)) - 70, r = Double(5 + int(60))
        return .array((0..<(3 + int(4))).map { i in
            let angle = Double(i) * 2 * .pi / 6 + Double(int(10)) / 10
            return .array([.double(cx + r * cos(angle)), .double(cy + r * sin(angle) / 2)])
        })
    }

    mutating func geo(_ ops: inout JSONObject) {
        switch int(6) {
        case 0:
            ops["$geoWithin"] = .object(JSONObject([("$box", .array([point(), point()]))]))
        case 1:
            ops["$geoWithin"] = .object(JSONObject([("$center", .array([.array([coordinate(180), coordinate(90)]), .double(Double(int(120)))]))]))
        case 2:
            ops[pick(["$geoWithin", "$within"])] = .object(JSONObject([("$centerSphere", .array([point(), .double(Double(int(100)) / 100)]))]))
        case 3:
            ops["$geoWithin"] = .object(JSONObject([("$polygon", ring())]))
        case 4:
            let rings: [JSONValue] = chance(50) ? [ring()] : [ring(), ring()]
            ops["$geoWithin"] = .object(JSONObject([("$geometry", .object(JSONObject([("type", .string("Polygon")), ("coordinates", .array(rings))])))]))
        default:
            ops[pick(["$nearSphere", "$near"])] = point()
            if chance(70) { ops["$maxDistance"] = .double(Double(int(5000)) * 1000) }
            if chance(30) { ops["$minDistance"] = .int(Int64(int(2000)) * 1000) }
        }
    }
}
