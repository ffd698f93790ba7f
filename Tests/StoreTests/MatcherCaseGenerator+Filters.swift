import JSON
import Store

/// Random filters: every operator, nested `$and`/`$or`/`$nor`/`$not`/`$elemMatch`.
extension MatcherCaseGenerator {
    mutating func operatorObject(depth: Int, allowNot: Bool = true, geo: inout Bool) -> JSONObject {
        var ops = JSONObject()
        for _ in 0..<(1 + int(2)) {
            switch int(19) {
            case 0: ops["$eq"] = literal()
            case 1: ops["$ne"] = literal()
            case 2: ops["$gt"] = comparable()
            case 3: ops["$gte"] = comparable()
            case 4: ops["$lt"] = comparable()
            case 5: ops["$lte"] = comparable()
            case 6: ops[pick(["$in", "$nin"])] = .array((0..<int(5)).map { _ in literal() })
            case 7: ops["$exists"] = pick([.bool(true), .bool(false), .int(1), .int(0), .null, .double(0.5)])
            case 8 where allowNot && depth < 2: ops["$not"] = .object(operatorObject(depth: depth + 1, allowNot: false, geo: &geo))
            case 9:
                ops["$all"] = .array((0..<int(3)).map { _ in
                    if depth < 2 && chance(15) { return .object(JSONObject([("$elemMatch", .object(operatorObject(depth: depth + 1, geo: &geo)))])) }
                    return chance(80) ? scalar() : scalarArray()
                })
            case 10: ops["$size"] = pick([.int(0), .int(1), .int(2), .int(3), .double(2.0)])
            case 11 where depth < 2:
                if chance(50) {
                    var none = true // no geo inside an element: geo needs a named field
                    ops["$elemMatch"] = .object(operatorObject(depth: depth + 1, geo: &none))
                } else {
                    ops["$elemMatch"] = .object(filter(depth: depth + 1, paths: ["p", "q", "r.p", "0", "p.0"], geo: &geo))
                }
            case 12, 13:
                let (pattern, options) = regex()
                ops["$regex"] = pattern
                if let options { ops["$options"] = options }
            case 14: ops["$mod"] = .array([pick([.int(2), .int(3), .int(-1), .int(-3), .double(2.7)]), pick([.int(0), .int(1), .int(-1), .double(1.9)])])
            case 15:
                let names: [JSONValue] = [.string("number"), .string("string"), .string("bool"), .string("null"), .string("array"),
                                          .string("object"), .string("int"), .int(2), .int(4), .int(8), .int(10)]
                ops["$type"] = chance(70) ? pick(names) : .array([pick(names), pick(names)])
            case 16 where !geo:
                geo = true
                self.geo(&ops)
            case 17: ops["$comment"] = .string("ignored") // only at the document level; here an unknown operator
            default: ops["$eq"] = literal()
            }
        }
        ops["$comment"] = nil
        // $nearSphere's distances need it beside them; without it, drop them.
        if ops["$nearSphere"] == nil && ops["$near"] == nil { ops["$maxDistance"] = nil; ops["$minDistance"] = nil }
        return ops
    }

    mutating func filter(depth: Int = 0, paths: [String] = MatcherCaseGenerator.paths, geo: inout Bool) -> JSONObject {
        var f = JSONObject()
        for _ in 0..<(1 + int(2)) {
            if depth < 2 && chance(20) {
                let op = pick(["$and", "$or", "$nor"])
                f[op] = .array((0..<(1 + int(3))).map { _ in .object(filter(depth: depth + 1, paths: paths, geo: &geo)) })
            } else if chance(3) {
                f["$comment"] = .string("why")
            } else {
                var path = pick(paths)
                let ops = operatorObject(depth: depth, geo: &geo)
                // Geo reads a plain path: aim it at the points most of the time.
                if ops.members.contains(where: { ["$geoWithin", "$within", "$nearSphere", "$near"].contains($0.key) }) {
                    path = depth == 0 && chance(80) ? "loc" : path
                }
                f[path] = chance(30) ? literal() : .object(ops)
            }
        }
        return f
    }

    mutating func filter() -> JSONObject {
        var geo = false
        return filter(geo: &geo)
    }
}
