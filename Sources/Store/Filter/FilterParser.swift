import JSON

/// Reads a MongoDB-style JSON filter into a `Filter`, refusing what Roost
/// does not run with a sentence that says why. The walk counts conditions
/// (`QueryLimits.maxConditions`) and nesting (`QueryLimits.maxDepth`) as it
/// goes, so a hostile filter is refused before anything is built for it.
struct FilterParser {
    /// Conditions so far: one per operator per part of its field path, one
    /// per extra `$all` value and `$type` name.
    private(set) var conditions = 0
    private var nearSpheres = 0

    mutating func parse(_ json: JSONValue) throws(QueryError) -> Filter {
        guard case .object(let object) = json else {
            throw .invalid("The query must be a JSON object, not \(json.typeName).")
        }
        if json.containsNUL { throw .invalid(JSONValue.nulRefusal) }
        let clauses = try document(object, depth: 0, onElement: false)
        return Filter(clauses: clauses, conditions: conditions)
    }

    private func checkDepth(_ depth: Int) throws(QueryError) {
        guard depth < QueryLimits.maxDepth else {
            throw .invalid("The query nests $and, $or, $nor, $not and $elemMatch more than \(QueryLimits.maxDepth) deep.")
        }
    }

    /// Counts `n` more conditions against `QueryLimits.maxConditions`.
    private mutating func count(_ n: Int = 1) throws(QueryError) {
        conditions += n
        guard conditions <= QueryLimits.maxConditions else {
            throw .invalid("The query has more than \(QueryLimits.maxConditions) conditions (operators and $all values, each counted once per part of its field path); split it into smaller queries.")
        }
    }

    /// A document-level filter: every member must hold.
    /// - Parameter onElement: inside `$elemMatch`, where the root is an array element.
    private mutating func document(_ object: JSONObject, depth: Int, onElement: Bool) throws(QueryError) -> [Filter.Clause] {
        try checkDepth(depth)
        var clauses: [Filter.Clause] = []
        for (key, value) in object {
            switch key {
            case "$and", "$or", "$nor":
                guard case .array(let items) = value, !items.isEmpty else {
                    throw .invalid("\(key) needs a non-empty array of filter objects.")
                }
                var parts: [[Filter.Clause]] = []
                for item in items {
                    guard case .object(let sub) = item else { throw .invalid("Each entry of \(key) must be an object.") }
                    parts.append(try document(sub, depth: depth + 1, onElement: onElement))
                }
                clauses.append(.group(key == "$and" ? .and : key == "$or" ? .or : .nor, parts))
            case "$comment":
                continue
            default:
                if key.hasPrefix("$") { throw .unsupported(key) }
                let path = try FieldPath(key)
                if case .object(let ops) = value, let first = ops.members.first, first.key.hasPrefix("$") {
                    clauses.append(.field(path, try operators(ops, path: path.components, depth: depth, onElement: onElement)))
                } else {
                    try count(path.components.count)
                    clauses.append(.equals(path, value))
                }
            }
        }
        return clauses
    }

    /// An operator object such as `{"$gt": 5, "$lt": 10}`, on a field at
    /// `path` (empty for `$elemMatch`'s element itself).
    private mutating func operators(_ ops: JSONObject, path: [String], depth: Int, onElement: Bool) throws(QueryError) -> [Filter.Operator] {
        try checkDepth(depth)
        let dotted = path.joined(separator: ".")
        // A condition costs one per part of its path: SQL grows with both.
        let weight = max(1, path.count)
        if ops["$options"] != nil && ops["$regex"] == nil { throw .invalid("$options needs a $regex beside it.") }
        if ops["$maxDistance"] != nil || ops["$minDistance"] != nil, ops["$nearSphere"] == nil && ops["$near"] == nil {
            throw .invalid("$maxDistance and $minDistance need a $nearSphere beside them.")
        }
        var parsed: [Filter.Operator] = []
        for (op, arg) in ops {
            guard op.hasPrefix("$") else {
                throw .invalid("Operators and field names cannot be mixed in the condition on \"\(dotted)\" (found \"\(op)\").")
            }
            try count(weight)
            switch op {
            case "$options", "$maxDistance", "$minDistance":
                continue // read beside $regex and $nearSphere
            case "$eq": parsed.append(.eq(arg))
            case "$ne": parsed.append(.ne(arg))
            case "$gt", "$gte", "$lt", "$lte":
                if case .array = arg { throw Self.notComparable(op, arg) }
                if case .object = arg { throw Self.notComparable(op, arg) }
                parsed.append(.compare(Filter.Comparison(rawValue: op)!, arg))
            case "$in", "$nin":
                guard case .array(let values) = arg else { throw .invalid("\(op) needs an array.") }
                guard values.count <= QueryLimits.maxListValues else {
                    throw .invalid("\(op) may list at most \(QueryLimits.maxListValues) values.")
                }
                parsed.append(.oneOf(values, negated: op == "$nin"))
            case "$exists":
                switch arg {
                case .bool(let b): parsed.append(.exists(b))
                case .int(let i): parsed.append(.exists(i != 0))
                case .double(let d): parsed.append(.exists(d != 0))
                case .null: parsed.append(.exists(false))
                default: throw .invalid("$exists needs true or false.")
                }
            case "$not":
                guard case .object(let inner) = arg, let first = inner.members.first, first.key.hasPrefix("$") else {
                    throw .invalid("$not needs an operator object, such as {\"$not\": {\"$gt\": 5}}.")
                }
                parsed.append(.not(try operators(inner, path: path, depth: depth + 1, onElement: onElement)))
            case "$all":
                guard case .array(let values) = arg else { throw .invalid("$all needs an array.") }
                try count(max(0, values.count - 1) * weight)
                var entries: [Filter.AllEntry] = []
                for value in values {
                    if case .object(let o) = value, o.members.first?.key == "$elemMatch" {
                        entries.append(.operators(try operators(o, path: path, depth: depth + 1, onElement: onElement)))
                    } else {
                        entries.append(.value(value))
                    }
                }
                parsed.append(.all(entries))
            case "$size":
                guard let n = arg.doubleValue, n >= 0, n == n.rounded(), let size = Int64(exactly: n) else {
                    throw .invalid("$size needs a non-negative whole number.")
                }
                parsed.append(.size(size))
            case "$elemMatch":
                guard case .object(let inner) = arg else { throw .invalid("$elemMatch needs an object.") }
                // $and, $or and $nor hold element queries, as in MongoDB; other `$` keys are operators on the element.
                let firstKey = inner.members.first?.key ?? ""
                if firstKey.hasPrefix("$") && !["$and", "$or", "$nor"].contains(firstKey) {
                    parsed.append(.elemMatch(.operators(try operators(inner, path: [], depth: depth + 1, onElement: true))))
                } else {
                    parsed.append(.elemMatch(.document(try document(inner, depth: depth + 1, onElement: true))))
                }
            case "$regex":
                guard case .string(let source) = arg else { throw .invalid("$regex needs a string pattern.") }
                var flags = ""
                if let options = ops["$options"] {
                    guard case .string(let o) = options, o.allSatisfy({ "imsx".contains($0) }) else {
                        throw .invalid("$options may only hold the letters i, m, s and x.")
                    }
                    flags = o
                }
                try RegexFunction.validate(source, flags: flags)
                parsed.append(.regex(source: source, flags: flags))
            case "$mod":
                // Both are truncated to 64-bit integers, as MongoDB does; values out of range are refused.
                guard case .array(let pair) = arg, pair.count == 2,
                      let divisor = pair[0].doubleValue.flatMap({ Int64(exactly: $0.rounded(.towardZero)) }),
                      let remainder = pair[1].doubleValue.flatMap({ Int64(exactly: $0.rounded(.towardZero)) }),
                      divisor != 0 else {
                    throw .invalid("$mod needs [divisor, remainder] with a non-zero divisor.")
                }
                parsed.append(.mod(divisor: divisor, remainder: remainder))
            case "$type":
                let names: [JSONValue] = arg.arrayValue ?? [arg]
                try count(max(0, names.count - 1) * weight)
                var classes: [Filter.TypeClass] = []
                for name in names { classes.append(try Self.typeClass(name)) }
                parsed.append(.type(classes))
            case "$geoWithin", "$within":
                guard !path.isEmpty else { throw .invalid("\(op) needs a field.") }
                parsed.append(.geoWithin(try GeoShapeParser.shape(arg)))
            case "$nearSphere", "$near":
                // Nearest-first orders whole documents: inside $elemMatch there is no document to order.
                guard !onElement else {
                    throw .invalid("$nearSphere cannot be used inside $elemMatch; put it at the top of the query.")
                }
                guard !path.isEmpty else { throw .invalid("\(op) needs a field.") }
                nearSpheres += 1
                guard nearSpheres == 1 else { throw .invalid("A query may hold only one $nearSphere.") }
                parsed.append(.nearSphere(try GeoShapeParser.near(arg, maxDistance: ops["$maxDistance"], minDistance: ops["$minDistance"])))
            default:
                throw .unsupported(op)
            }
        }
        return parsed
    }

    static func notComparable(_ op: String, _ literal: JSONValue) -> QueryError {
        .invalid("\(op) compares numbers, strings, booleans or null; comparing with an \(literal.typeName) is not supported.")
    }

    /// `$type` names and BSON numbers, read as the classes Roost stores.
    static func typeClass(_ name: JSONValue) throws(QueryError) -> Filter.TypeClass {
        let key: String
        switch name {
        case .string(let s): key = s
        case .int(let i): key = ["1": "double", "2": "string", "3": "object", "4": "array", "8": "bool", "10": "null", "16": "int", "18": "long"]["\(i)"] ?? "?"
        default: key = "?"
        }
        switch key {
        case "double", "int", "long", "decimal", "number": return .number
        case "string": return .string
        case "object": return .object
        case "array": return .array
        case "bool": return .bool
        case "null": return .null
        default: throw .invalid("$type \(name.jsonText) is not a type Roost stores (use number, string, object, array, bool or null).")
        }
    }
}
