import JSON

extension FilterCompiler {
    /// An operator object such as `{"$gt": 5, "$lt": 10}`: every operator must hold.
    func compileOperators(_ ops: JSONObject, path: ArraySlice<String>, root: ValueRef,
                          expand: Bool, depth: Int) throws(QueryError) -> String {
        try checkDepth(depth)
        let dotted = path.joined(separator: ".")
        let fieldPath = path.isEmpty ? nil : try FieldPath(dotted)
        // A condition costs one per part of its path: SQL grows with both.
        let weight = max(1, path.count)
        var clauses: [String] = []
        let regexOptions = ops["$options"]
        if regexOptions != nil && ops["$regex"] == nil { throw .invalid("$options needs a $regex beside it.") }
        if ops["$maxDistance"] != nil || ops["$minDistance"] != nil,
           ops["$nearSphere"] == nil && ops["$near"] == nil {
            throw .invalid("$maxDistance and $minDistance need a $nearSphere beside them.")
        }

        func any(_ predicate: (ValueRef) -> String) -> String {
            anyValue(root, path, expand: expand, predicate)
        }

        // Both bounds on an index that never held an array: one index range.
        var handled: Set<String> = []
        if let p = fieldPath, let (range, used) = indexedRange(p, ops) {
            clauses.append(range)
            handled = used
        }

        for (op, arg) in ops where !handled.contains(op) {
            guard op.hasPrefix("$") else {
                throw .invalid("Operators and field names cannot be mixed in the condition on \"\(dotted)\" (found \"\(op)\").")
            }
            try count(weight)
            switch op {
            case "$eq":
                if let p = fieldPath, let indexed = indexedEquality(p, [arg]) { clauses.append(indexed); continue }
                if expand, let keyed = keyed(path, op, arg, root: root) { clauses.append(keyed); continue }
                clauses.append(any { self.equals($0, arg) })
            case "$ne":
                clauses.append(dialect.not(any { self.equals($0, arg) }))
            case "$gt", "$gte", "$lt", "$lte":
                if let p = fieldPath, let indexed = indexedComparison(p, op, arg) { clauses.append(indexed); continue }
                if expand, let keyed = keyed(path, op, arg, root: root) { clauses.append(keyed); continue }
                let sqlOp = ["$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="][op]!
                let predicate = try comparison(sqlOp, arg, op: op)
                clauses.append(any(predicate))
            case "$in", "$nin":
                guard case .array(let values) = arg else { throw .invalid("\(op) needs an array.") }
                guard values.count <= QueryLimits.maxListValues else {
                    throw .invalid("\(op) may list at most \(QueryLimits.maxListValues) values.")
                }
                let positive: String
                if values.isEmpty {
                    positive = dialect.falseSQL
                } else if let p = fieldPath, let indexed = indexedEquality(p, values) {
                    positive = indexed
                } else if useIndexes, path == ["_id"], values.allSatisfy({ $0.stringValue != nil }) {
                    positive = "\(Self.idColumn) IN (" + values.map { bind(.text($0.stringValue!)) }.joined(separator: ",") + ")"
                } else {
                    positive = any { ref in self.equalsAny(ref, values) }
                }
                clauses.append(op == "$in" ? positive : dialect.not(positive))
            case "$exists":
                let wanted: Bool
                switch arg {
                case .bool(let b): wanted = b
                case .int(let i): wanted = i != 0
                case .double(let d): wanted = d != 0
                case .null: wanted = false
                default: throw .invalid("$exists needs true or false.")
                }
                let exists = anyValue(root, path, expand: false) { "(\(self.typeOf($0)) IS NOT NULL)" }
                clauses.append(wanted ? exists : dialect.not(exists))
            case "$not":
                guard case .object(let inner) = arg, let first = inner.members.first, first.key.hasPrefix("$") else {
                    throw .invalid("$not needs an operator object, such as {\"$not\": {\"$gt\": 5}}.")
                }
                clauses.append(dialect.not(try compileOperators(inner, path: path, root: root, expand: expand, depth: depth + 1)))
            case "$all":
                guard case .array(let values) = arg else { throw .invalid("$all needs an array.") }
                if values.isEmpty { clauses.append(dialect.falseSQL); continue }
                try count((values.count - 1) * weight)
                for value in values {
                    if case .object(let o) = value, o.members.first?.key == "$elemMatch" {
                        clauses.append(try compileOperators(o, path: path, root: root, expand: expand, depth: depth + 1))
                    } else if let p = fieldPath, let indexed = indexedEquality(p, [value]) {
                        clauses.append(indexed)
                    } else {
                        clauses.append(any { self.equals($0, value) })
                    }
                }
            case "$size":
                guard let n = arg.doubleValue, n >= 0, n == n.rounded(), let size = Int64(exactly: n) else {
                    throw .invalid("$size needs a non-negative whole number.")
                }
                clauses.append(anyValue(root, path, expand: false) { ref in
                    "(\(self.dialect.isArray(self.typeOf(ref))) AND \(self.dialect.arrayLength(ref, bind: self.bind)) = \(self.bind(.int(size))))"
                })
            case "$elemMatch":
                guard case .object(let inner) = arg else { throw .invalid("$elemMatch needs an object.") }
                clauses.append(try elemMatch(inner, path: path, root: root, depth: depth))
            case "$regex":
                clauses.append(any(try regexPredicate(arg, options: regexOptions)))
            case "$options":
                continue
            case "$mod":
                // Both are truncated to 64-bit integers, as MongoDB does; values out of range are refused.
                guard case .array(let pair) = arg, pair.count == 2,
                      let divisor = pair[0].doubleValue.flatMap({ Int64(exactly: $0.rounded(.towardZero)) }),
                      let remainder = pair[1].doubleValue.flatMap({ Int64(exactly: $0.rounded(.towardZero)) }),
                      divisor != 0 else {
                    throw .invalid("$mod needs [divisor, remainder] with a non-zero divisor.")
                }
                clauses.append(any { ref in
                    "(\(self.dialect.isNumber(self.typeOf(ref))) AND \(self.dialect.integerPart(self.numberOf(ref))) % \(self.bind(.int(divisor))) = \(self.bind(.int(remainder))))"
                })
            case "$type":
                let names: [JSONValue] = arg.arrayValue ?? [arg]
                try count(max(0, names.count - 1) * weight)
                var predicates: [(ValueRef) -> String] = []
                for name in names { predicates.append(try typePredicate(name)) }
                clauses.append(any { ref in "(" + predicates.map { $0(ref) }.joined(separator: " OR ") + ")" })
            case "$geoWithin", "$within":
                guard dialect.supportsGeo else { throw Self.noGeo(op) }
                guard let p = fieldPath else { throw .invalid("\(op) needs a field.") }
                clauses.append(try geoWithin(p, arg, root: root))
            case "$nearSphere", "$near":
                guard dialect.supportsGeo else { throw Self.noGeo(op) }
                guard let p = fieldPath else { throw .invalid("\(op) needs a field.") }
                clauses.append(try nearSphere(p, arg, maxDistance: ops["$maxDistance"], minDistance: ops["$minDistance"], root: root))
            case "$maxDistance", "$minDistance":
                continue
            default:
                throw .unsupported(op)
            }
        }
        return conjunction(clauses)
    }

    /// The refusal of a geo operator on a database whose dialect has none yet.
    static func noGeo(_ op: String) -> QueryError {
        .invalid("\(op) is not available on this storage engine yet (PostgreSQL: see docs/ENGINES.md).")
    }

    /// Equality with any of `values`: numbers and strings as SQL `IN` lists
    /// (one term each, however long the list), the rest one by one.
    func equalsAny(_ ref: ValueRef, _ values: [JSONValue]) -> String {
        var numbers: [SQLValue] = [], strings: [SQLValue] = [], others: [JSONValue] = []
        for v in values {
            switch v {
            case .int(let i): numbers.append(.int(i))
            case .double(let d): numbers.append(.double(d))
            case .string(let text): strings.append(.text(text))
            default: others.append(v)
            }
        }
        var terms: [String] = []
        if !numbers.isEmpty || !strings.isEmpty {
            let t = typeOf(ref), v = valueOf(ref)
            if !numbers.isEmpty {
                terms.append("(\(dialect.isNumber(t)) AND \(dialect.numberOf(v)) IN (" + numbers.map { bind($0) }.joined(separator: ",") + "))")
            }
            if !strings.isEmpty {
                terms.append("(\(dialect.isString(t)) AND \(dialect.stringOf(v)) IN (" + strings.map { bind($0) }.joined(separator: ",") + "))")
            }
        }
        terms += others.map { equals(ref, $0) }
        return balanced(terms, "OR")
    }

    /// MongoDB compares only within one type bracket: numbers with numbers, strings with strings.
    func comparison(_ sqlOp: String, _ literal: JSONValue, op: String) throws(QueryError) -> (ValueRef) -> String {
        switch literal {
        case .int, .double:
            let bound: SQLValue = literal.doubleValue.map { d in
                if case .int(let i) = literal { return .int(i) } else { return .double(d) }
            }!
            return { ref in "(\(self.dialect.isNumber(self.typeOf(ref))) AND \(self.numberOf(ref)) \(sqlOp) \(self.bind(bound)))" }
        case .string(let s):
            return { ref in "(\(self.dialect.isString(self.typeOf(ref))) AND \(self.stringOf(ref)) \(sqlOp) \(self.bind(.text(s))))" }
        case .null:
            if sqlOp == ">=" || sqlOp == "<=" { return { ref in self.equals(ref, .null) } }
            return { _ in self.dialect.falseSQL }
        case .bool(let b):
            return { ref in
                let t = self.typeOf(ref)
                let isTrue = self.dialect.isBool(t, true), isFalse = self.dialect.isBool(t, false)
                return "((\(isTrue) OR \(isFalse)) AND (CASE WHEN \(isTrue) THEN 1 ELSE 0 END) \(sqlOp) \(b ? 1 : 0))"
            }
        case .array, .object:
            throw .invalid("\(op) compares numbers, strings, booleans or null; comparing with an \(literal.typeName) is not supported.")
        }
    }

    func regexPredicate(_ pattern: JSONValue, options: JSONValue?) throws(QueryError) -> (ValueRef) -> String {
        guard case .string(let source) = pattern else { throw .invalid("$regex needs a string pattern.") }
        var flags = ""
        if let options {
            guard case .string(let o) = options, o.allSatisfy({ "imsx".contains($0) }) else {
                throw .invalid("$options may only hold the letters i, m, s and x.")
            }
            flags = o
        }
        try RegexFunction.validate(source, flags: flags)
        let rendered = try dialect.regexSource(source, flags: flags)
        return { ref in
            let match = self.dialect.regexMatch(value: self.stringOf(ref), pattern: self.bind(.text(rendered.pattern)), flags: self.bind(.text(rendered.flags)))
            return "(\(self.dialect.isString(self.typeOf(ref))) AND \(match))"
        }
    }

    func typePredicate(_ name: JSONValue) throws(QueryError) -> (ValueRef) -> String {
        let key: String
        switch name {
        case .string(let s): key = s
        case .int(let i): key = ["1": "double", "2": "string", "3": "object", "4": "array", "8": "bool", "10": "null", "16": "int", "18": "long"]["\(i)"] ?? "?"
        default: key = "?"
        }
        switch key {
        case "double", "int", "long", "decimal", "number": return { self.dialect.isNumber(self.typeOf($0)) }
        case "string": return { self.dialect.isString(self.typeOf($0)) }
        case "object": return { self.dialect.isObject(self.typeOf($0)) }
        case "array": return { self.dialect.isArray(self.typeOf($0)) }
        case "bool": return { ref in let t = self.typeOf(ref); return "(\(self.dialect.isBool(t, true)) OR \(self.dialect.isBool(t, false)))" }
        case "null": return { self.dialect.isNull(self.typeOf($0)) }
        default: throw .invalid("$type \(name.jsonText) is not a type Roost stores (use number, string, object, array, bool or null).")
        }
    }

    /// `$elemMatch`: one array element must satisfy every condition at once.
    func elemMatch(_ inner: JSONObject, path: ArraySlice<String>, root: ValueRef, depth: Int) throws(QueryError) -> String {
        // $and, $or and $nor hold element queries, as in MongoDB; other `$` keys are operators on the element.
        let firstKey = inner.members.first?.key ?? ""
        let operatorForm = firstKey.hasPrefix("$") && !["$and", "$or", "$nor"].contains(firstKey)
        var failure: QueryError?
        let sql = anyValue(root, path, expand: false) { ref in
            let alias = self.nextAlias()
            let type = self.typeOf(ref)
            let from = self.dialect.elements(of: ref, alias: alias, bind: self.bind)
            let element = ValueRef.element(alias: alias)
            let condition: String
            do {
                if operatorForm {
                    condition = try self.compileOperators(inner, path: [], root: element, expand: false, depth: depth + 1)
                } else {
                    let body = try self.compileObjectOnElement(inner, element: element, depth: depth + 1)
                    condition = "(\(self.dialect.isObject("\(alias).type")) AND \(body))"
                }
            } catch {
                failure = error as? QueryError
                return self.dialect.falseSQL
            }
            return "(\(self.dialect.isArray(type)) AND EXISTS (SELECT 1 FROM \(from) WHERE \(condition)))"
        }
        if let failure { throw failure }
        return sql
    }

    /// A field filter evaluated against an array element that is a document.
    func compileObjectOnElement(_ object: JSONObject, element: ValueRef, depth: Int) throws(QueryError) -> String {
        // Indexes and the id column describe whole documents, not elements.
        let saved = useIndexes
        useIndexes = false
        defer { useIndexes = saved }
        return try compileObject(object, root: element, depth: depth)
    }
}
