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
