import JSON

/// Building the tree: the same walk over the filter as
/// `FilterCompiler.compileObject` and `compileOperators`, making nodes
/// where they make SQL. The filter has already compiled, so the checks here
/// only guard against the two walks drifting apart.
extension FilterMatcher {
    /// - Parameter onElement: inside `$elemMatch`, where the root is an array element.
    static func document(_ object: JSONObject, onElement: Bool = false) throws(QueryError) -> Node {
        var clauses: [Node] = []
        for (key, value) in object {
            switch key {
            case "$and", "$or", "$nor":
                guard case .array(let items) = value, !items.isEmpty else { throw .invalid("\(key) needs a non-empty array.") }
                var parts: [Node] = []
                for item in items {
                    guard case .object(let sub) = item else { throw .invalid("Each entry of \(key) must be an object.") }
                    parts.append(try document(sub, onElement: onElement))
                }
                clauses.append(key == "$and" ? .and(parts) : key == "$or" ? .or(parts) : .not(.or(parts)))
            case "$comment":
                continue
            default:
                if key.hasPrefix("$") { throw .unsupported(key) }
                let path = try FieldPath(key).components[...]
                if case .object(let ops) = value, let first = ops.members.first, first.key.hasPrefix("$") {
                    clauses.append(try operators(ops, path: path, expand: true, onElement: onElement))
                } else {
                    clauses.append(.field(Path(path), expand: true, .equals(literal(value))))
                }
            }
        }
        return .and(clauses)
    }

    /// An operator object such as `{"$gt": 5, "$lt": 10}`: every operator must hold.
    static func operators(_ ops: JSONObject, path: ArraySlice<String>, expand: Bool, onElement: Bool) throws(QueryError) -> Node {
        let p = Path(path)
        var clauses: [Node] = []
        for (op, arg) in ops {
            switch op {
            case "$eq":
                clauses.append(.field(p, expand: expand, .equals(literal(arg))))
            case "$ne":
                clauses.append(.not(.field(p, expand: expand, .equals(literal(arg)))))
            case "$gt", "$gte", "$lt", "$lte":
                let order: Order = ["$gt": .gt, "$gte": .gte, "$lt": .lt, "$lte": .lte][op]!
                clauses.append(.field(p, expand: expand, .compare(order, try bound(arg, order))))
            case "$in", "$nin":
                guard case .array(let values) = arg else { throw .invalid("\(op) needs an array.") }
                let positive: Node = values.isEmpty ? .constant(false) : .field(p, expand: expand, .equalsAny(LiteralSet(values.map(literal))))
                clauses.append(op == "$in" ? positive : .not(positive))
            case "$exists":
                let wanted: Bool
                switch arg {
                case .bool(let b): wanted = b
                case .int(let i): wanted = i != 0
                case .double(let d): wanted = d != 0
                case .null: wanted = false
                default: throw .invalid("$exists needs true or false.")
                }
                let exists = Node.field(p, expand: false, .exists)
                clauses.append(wanted ? exists : .not(exists))
            case "$not":
                guard case .object(let inner) = arg else { throw .invalid("$not needs an operator object.") }
                clauses.append(.not(try operators(inner, path: path, expand: expand, onElement: onElement)))
            case "$all":
                guard case .array(let values) = arg else { throw .invalid("$all needs an array.") }
                if values.isEmpty { clauses.append(.constant(false)); continue }
                for value in values {
                    if case .object(let o) = value, o.members.first?.key == "$elemMatch" {
                        clauses.append(try operators(o, path: path, expand: expand, onElement: onElement))
                    } else {
                        clauses.append(.field(p, expand: expand, .equals(literal(value))))
                    }
                }
            case "$size":
                guard let n = arg.doubleValue, let size = Int64(exactly: n) else { throw .invalid("$size needs a whole number.") }
                clauses.append(.field(p, expand: false, .size(size)))
            case "$elemMatch":
                guard case .object(let inner) = arg else { throw .invalid("$elemMatch needs an object.") }
                let firstKey = inner.members.first?.key ?? ""
                let operatorForm = firstKey.hasPrefix("$") && !["$and", "$or", "$nor"].contains(firstKey)
                let node = operatorForm ? try operators(inner, path: [], expand: false, onElement: true) : try document(inner, onElement: true)
                clauses.append(.field(p, expand: false, .elemMatch(node, operatorForm: operatorForm)))
            case "$regex":
                guard case .string(let source) = arg else { throw .invalid("$regex needs a string pattern.") }
                let flags = ops["$options"]?.stringValue ?? ""
                clauses.append(.field(p, expand: expand, .regex(try Regex(source, flags: flags))))
            case "$options", "$maxDistance", "$minDistance":
                continue
            case "$mod":
                guard case .array(let pair) = arg, pair.count == 2,
                      let divisor = pair[0].doubleValue.flatMap({ Int64(exactly: $0.rounded(.towardZero)) }),
                      let remainder = pair[1].doubleValue.flatMap({ Int64(exactly: $0.rounded(.towardZero)) }),
                      divisor != 0 else { throw .invalid("$mod needs [divisor, remainder].") }
                clauses.append(.field(p, expand: expand, .mod(divisor: divisor, remainder: remainder)))
            case "$type":
                var classes: [TypeClass] = []
                for name in arg.arrayValue ?? [arg] { classes.append(try typeClass(name)) }
                clauses.append(.field(p, expand: expand, .type(classes)))
            case "$geoWithin", "$within", "$nearSphere", "$near":
                guard !path.isEmpty else { throw .invalid("\(op) needs a field.") }
                if op.hasPrefix("$near") {
                    // A list orders by the distance, outside the element's row, and fails in SQLite.
                    guard !onElement else { throw .invalid("\(op) cannot be used inside $elemMatch.") }
                    clauses.append(.geo(Array(path), try nearSphere(arg, ops)))
                    continue
                }
                clauses.append(.geo(Array(path), try geoWithin(arg)))
            default:
                throw .unsupported(op)
            }
        }
        return .and(clauses)
    }

    static func literal(_ value: JSONValue) -> Literal {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .number(.int(i))
        case .double(let d): return .number(.double(d))
        case .string(let s): return .string(s)
        case .array: return .container(isArray: true, text: value.jsonText)
        case .object: return .container(isArray: false, text: value.jsonText)
        }
    }

    /// MongoDB compares only within one type bracket (`FilterCompiler.comparison`).
    static func bound(_ value: JSONValue, _ order: Order) throws(QueryError) -> Bound {
        switch value {
        case .int(let i): return .number(.int(i))
        case .double(let d): return .number(.double(d))
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b ? 1 : 0)
        case .null: return order == .gte || order == .lte ? .null : .never
        case .array, .object: throw .invalid("Comparing with an \(value.typeName) is not supported.")
        }
    }

    /// `$type` names and BSON numbers, as `FilterCompiler.typePredicate` reads them.
    static func typeClass(_ name: JSONValue) throws(QueryError) -> TypeClass {
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
        default: throw .invalid("$type \(name.jsonText) is not a type Roost stores.")
        }
    }
}
