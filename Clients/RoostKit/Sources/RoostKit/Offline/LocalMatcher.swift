import Foundation

/// Evaluates Roost's MongoDB filters on local copies, so the offline store
/// answers the same queries as the server (for the operators listed in
/// ``OfflineCollection/find(_:)``), with MongoDB's array rules: a condition on
/// an array matches when any element does, `null` matches a missing field,
/// numbers never equal strings.
struct LocalMatcher {
    let filter: [String: JSONValue]

    func matches(_ document: JSONValue) throws -> Bool { try Self.match(filter, document) }

    static func match(_ filter: [String: JSONValue], _ document: JSONValue) throws -> Bool {
        for (key, condition) in filter {
            switch key {
            case "$and": guard try list(condition).allSatisfy({ try match($0, document) }) else { return false }
            case "$or": guard try list(condition).contains(where: { try match($0, document) }) else { return false }
            case "$nor": guard try !list(condition).contains(where: { try match($0, document) }) else { return false }
            default:
                if key.hasPrefix("$") { throw unsupported(key) }
                guard try test(condition, resolve(document, key.split(separator: ".").map(String.init)[...])) else { return false }
            }
        }
        return true
    }

    /// The values at a dotted path; arrays fan out to their elements. `nil` means missing.
    static func resolve(_ value: JSONValue?, _ parts: ArraySlice<String>) -> [JSONValue?] {
        guard let head = parts.first else {
            if case .array(let a)? = value { return [value] + a.map { Optional($0) } }
            return [value]
        }
        switch value {
        case .object(let o)?: return o[head].map { resolve($0, parts.dropFirst()) } ?? [nil]
        case .array(let a)?:
            var out: [JSONValue?] = []
            if let i = Int(head), a.indices.contains(i) { out += resolve(a[i], parts.dropFirst()) }
            out += a.filter { $0.objectValue != nil }.flatMap { resolve($0, parts) }
            return out.isEmpty ? [nil] : out
        default: return [nil]
        }
    }

    private static func test(_ condition: JSONValue, _ candidates: [JSONValue?]) throws -> Bool {
        guard case .object(let ops) = condition, ops.keys.contains(where: { $0.hasPrefix("$") }) else {
            return candidates.contains { equal($0, condition) }
        }
        for (op, operand) in ops {
            let ok: Bool
            switch op {
            case "$eq": ok = candidates.contains { equal($0, operand) }
            case "$ne": ok = !candidates.contains { equal($0, operand) }
            case "$gt", "$gte", "$lt", "$lte":
                ok = candidates.contains { c in
                    guard let c, let order = compareSameType(c, operand) else { return false }
                    switch op {
                    case "$gt": return order == .orderedDescending
                    case "$gte": return order != .orderedAscending
                    case "$lt": return order == .orderedAscending
                    default: return order != .orderedDescending
                    }
                }
            case "$in": ok = try list(operand, raw: true).contains { v in candidates.contains { equal($0, v) } }
            case "$nin": ok = try !list(operand, raw: true).contains { v in candidates.contains { equal($0, v) } }
            case "$exists": ok = (candidates.contains { $0 != nil }) == (operand != .bool(false) && operand != .number(0))
            case "$regex": ok = try regex(operand, options: ops["$options"]?.stringValue ?? "", candidates)
            case "$options": ok = true
            case "$not": ok = try !test(operand, candidates)
            case "$size": ok = candidates.contains { $0?.arrayValue.map { Double($0.count) == operand.doubleValue } ?? false }
            case "$all": ok = try list(operand, raw: true).allSatisfy { v in candidates.contains { equal($0, v) } }
            case "$elemMatch":
                ok = candidates.contains { c in
                    c?.arrayValue?.contains { e in (try? test(operand, [e])) == true || (try? match(operand.objectValue ?? [:], e)) == true } ?? false
                }
            case "$geoWithin": ok = try GeoMath.within(operand, candidates)
            case "$nearSphere", "$near": ok = try GeoMath.near(operand, candidates) != nil
            case "$maxDistance", "$minDistance": ok = true
            default: throw unsupported(op)
            }
            if !ok { return false }
        }
        return true
    }

    static func equal(_ a: JSONValue?, _ b: JSONValue) -> Bool {
        guard let a else { return b == .null }
        return a == b
    }

    static func compareSameType(_ a: JSONValue, _ b: JSONValue) -> ComparisonResult? {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.string(let x), .string(let y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.bool(let x), .bool(let y)): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        default: return nil
        }
    }

    /// MongoDB's order across types: missing/null, numbers, strings, objects, arrays, booleans.
    static func compareForSort(_ a: JSONValue?, _ b: JSONValue?) -> ComparisonResult {
        func rank(_ v: JSONValue?) -> Int {
            switch v {
            case nil, .null?: return 0
            case .number?: return 1
            case .string?: return 2
            case .object?: return 3
            case .array?: return 4
            case .bool?: return 5
            }
        }
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? .orderedAscending : .orderedDescending }
        if let a, let b, let order = compareSameType(a, b) { return order }
        let (ta, tb) = (a?.jsonText ?? "", b?.jsonText ?? "")
        return ta < tb ? .orderedAscending : ta > tb ? .orderedDescending : .orderedSame
    }

    private static func regex(_ pattern: JSONValue, options: String, _ candidates: [JSONValue?]) throws -> Bool {
        guard let text = pattern.stringValue else { throw RoostError.localStore("$regex needs a string") }
        var o: NSRegularExpression.Options = []
        if options.contains("i") { o.insert(.caseInsensitive) }
        if options.contains("m") { o.insert(.anchorsMatchLines) }
        if options.contains("s") { o.insert(.dotMatchesLineSeparators) }
        if options.contains("x") { o.insert(.allowCommentsAndWhitespace) }
        let re: NSRegularExpression
        do { re = try NSRegularExpression(pattern: text, options: o) } catch { throw RoostError.localStore("bad $regex: \(text)") }
        return candidates.contains { c in
            guard let s = c?.stringValue else { return false }
            return re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
        }
    }

    private static func list(_ value: JSONValue, raw: Bool) throws -> [JSONValue] {
        guard case .array(let a) = value else { throw RoostError.localStore("expected an array in a filter") }
        return a
    }

    private static func list(_ value: JSONValue) throws -> [[String: JSONValue]] {
        try list(value, raw: true).map { try $0.objectValue ?? { throw RoostError.localStore("expected filter objects") }() }
    }

    private static func unsupported(_ op: String) -> RoostError {
        RoostError.localStore("the offline store does not evaluate \(op); query the server instead")
    }
}
