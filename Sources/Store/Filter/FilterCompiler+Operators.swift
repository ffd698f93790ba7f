import JSON

extension FilterCompiler {
    /// An operator object such as `{"$gt": 5, "$lt": 10}` on the field at
    /// `fieldPath` (nil: `$elemMatch`'s element itself): every operator must hold.
    func compileOperators(_ ops: [Filter.Operator], on fieldPath: FieldPath?, root: ValueRef,
                          expand: Bool) throws(QueryError) -> String {
        let path = fieldPath?.components[...] ?? []
        var clauses: [String] = []

        func any(_ predicate: (ValueRef) -> String) -> String {
            anyValue(root, path, expand: expand, predicate)
        }

        // Both bounds on an index that never held an array: one index range.
        var handled: Set<Int> = []
        if let p = fieldPath, let (range, used) = indexedRange(p, ops) {
            clauses.append(range)
            handled = used
        }

        for (position, op) in ops.enumerated() where !handled.contains(position) {
            switch op {
            case .eq(let arg):
                if let p = fieldPath, let indexed = indexedEquality(p, [arg]) { clauses.append(indexed); continue }
                if expand, let keyed = keyed(path, "$eq", arg, root: root) { clauses.append(keyed); continue }
                clauses.append(any { self.equals($0, arg) })
            case .ne(let arg):
                clauses.append(dialect.not(any { self.equals($0, arg) }))
            case .compare(let comparison, let arg):
                if let p = fieldPath, let indexed = indexedComparison(p, comparison, arg) { clauses.append(indexed); continue }
                if expand, let keyed = keyed(path, comparison.rawValue, arg, root: root) { clauses.append(keyed); continue }
                clauses.append(any(self.comparison(comparison.sqlOperator, arg)))
            case .oneOf(let values, let negated):
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
                clauses.append(negated ? dialect.not(positive) : positive)
            case .exists(let wanted):
                let exists = anyValue(root, path, expand: false) { "(\(self.typeOf($0)) IS NOT NULL)" }
                clauses.append(wanted ? exists : dialect.not(exists))
            case .not(let inner):
                clauses.append(dialect.not(try compileOperators(inner, on: fieldPath, root: root, expand: expand)))
            case .all(let entries):
                if entries.isEmpty { clauses.append(dialect.falseSQL); continue }
                for entry in entries {
                    switch entry {
                    case .operators(let inner):
                        clauses.append(try compileOperators(inner, on: fieldPath, root: root, expand: expand))
                    case .value(let value):
                        if let p = fieldPath, let indexed = indexedEquality(p, [value]) {
                            clauses.append(indexed)
                        } else {
                            clauses.append(any { self.equals($0, value) })
                        }
                    }
                }
            case .size(let size):
                clauses.append(anyValue(root, path, expand: false) { ref in
                    "(\(self.dialect.isArray(self.typeOf(ref))) AND \(self.dialect.arrayLength(ref, bind: self.bind)) = \(self.bind(.int(size))))"
                })
            case .elemMatch(let condition):
                clauses.append(try elemMatch(condition, path: path, root: root))
            case .regex(let source, let flags):
                clauses.append(any(try regexPredicate(source, flags: flags)))
            case .mod(let divisor, let remainder):
                clauses.append(any { ref in
                    "(\(self.dialect.isNumber(self.typeOf(ref))) AND \(self.dialect.integerPart(self.numberOf(ref))) % \(self.bind(.int(divisor))) = \(self.bind(.int(remainder))))"
                })
            case .type(let classes):
                let predicates = classes.map(typePredicate)
                clauses.append(any { ref in "(" + predicates.map { $0(ref) }.joined(separator: " OR ") + ")" })
            case .geoWithin(let shape):
                guard dialect.supportsGeo else { throw Self.noGeo("$geoWithin") }
                guard let p = fieldPath else { throw .invalid("$geoWithin needs a field.") }
                clauses.append(try geoWithin(p, shape, root: root))
            case .nearSphere(let near):
                guard dialect.supportsGeo else { throw Self.noGeo("$nearSphere") }
                guard let p = fieldPath else { throw .invalid("$nearSphere needs a field.") }
                clauses.append(nearSphere(p, near, root: root))
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

    /// MongoDB compares only within one type bracket: numbers with numbers,
    /// strings with strings (the parser refused arrays and documents).
    func comparison(_ sqlOp: String, _ literal: JSONValue) -> (ValueRef) -> String {
        switch literal {
        case .int(let i):
            return { ref in "(\(self.dialect.isNumber(self.typeOf(ref))) AND \(self.numberOf(ref)) \(sqlOp) \(self.bind(.int(i))))" }
        case .double(let d):
            return { ref in "(\(self.dialect.isNumber(self.typeOf(ref))) AND \(self.numberOf(ref)) \(sqlOp) \(self.bind(.double(d))))" }
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
            return { _ in self.dialect.falseSQL }
        }
    }

    /// A `$regex` the parser validated, in this engine's dialect.
    func regexPredicate(_ source: String, flags: String) throws(QueryError) -> (ValueRef) -> String {
        let rendered = try dialect.regexSource(source, flags: flags)
        return { ref in
            let match = self.dialect.regexMatch(value: self.stringOf(ref), pattern: self.bind(.text(rendered.pattern)), flags: self.bind(.text(rendered.flags)))
            return "(\(self.dialect.isString(self.typeOf(ref))) AND \(match))"
        }
    }

    func typePredicate(_ type: Filter.TypeClass) -> (ValueRef) -> String {
        switch type {
        case .number: return { self.dialect.isNumber(self.typeOf($0)) }
        case .string: return { self.dialect.isString(self.typeOf($0)) }
        case .object: return { self.dialect.isObject(self.typeOf($0)) }
        case .array: return { self.dialect.isArray(self.typeOf($0)) }
        case .bool: return { ref in let t = self.typeOf(ref); return "(\(self.dialect.isBool(t, true)) OR \(self.dialect.isBool(t, false)))" }
        case .null: return { self.dialect.isNull(self.typeOf($0)) }
        }
    }

    /// `$elemMatch`: one array element must satisfy every condition at once.
    func elemMatch(_ condition: Filter.ElementCondition, path: ArraySlice<String>, root: ValueRef) throws(QueryError) -> String {
        var failure: QueryError?
        let sql = anyValue(root, path, expand: false) { ref in
            let alias = self.nextAlias()
            let type = self.typeOf(ref)
            let from = self.dialect.elements(of: ref, alias: alias, bind: self.bind)
            let element = ValueRef.element(alias: alias)
            let inner: String
            do {
                switch condition {
                case .operators(let ops):
                    inner = try self.compileOperators(ops, on: nil, root: element, expand: false)
                case .document(let clauses):
                    inner = "(\(self.dialect.isObject("\(alias).type")) AND \(try self.compileClausesOnElement(clauses, element: element)))"
                }
            } catch {
                failure = error as? QueryError
                return self.dialect.falseSQL
            }
            return "(\(self.dialect.isArray(type)) AND EXISTS (SELECT 1 FROM \(from) WHERE \(inner)))"
        }
        if let failure { throw failure }
        return sql
    }

    /// A field filter evaluated against an array element that is a document.
    func compileClausesOnElement(_ clauses: [Filter.Clause], element: ValueRef) throws(QueryError) -> String {
        // Indexes and the id column describe whole documents, not elements.
        let saved = useIndexes
        useIndexes = false
        defer { useIndexes = saved }
        return try compileClauses(clauses, root: element)
    }
}
