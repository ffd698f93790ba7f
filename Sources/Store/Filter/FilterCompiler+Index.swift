import JSON

/// The value classes a multikey index entry can hold.
package enum IndexValueClass: Int64 {
    case number = 2
    case string = 3
    case bool = 4

    /// The class and SQL value of a scalar, or nil for null, arrays and objects.
    package static func classify(_ value: JSONValue) -> (IndexValueClass, SQLValue)? {
        switch value {
        case .int(let i): return (.number, .int(i))
        case .double(let d): return (.number, .double(d))
        case .string(let s): return (.string, .text(s))
        case .bool(let b): return (.bool, .int(b ? 1 : 0))
        default: return nil
        }
    }
}

extension FilterCompiler {
    func indexTable(for path: FieldPath) -> String? {
        guard useIndexes, let layout, layout.indexedPaths.contains(path.description) else { return nil }
        return layout.indexTable
    }

    /// Equality with any of `values` through the multikey index, when every
    /// value is a scalar the index holds; nil means "compile it generically".
    func indexedEquality(_ path: FieldPath, _ values: [JSONValue]) -> String? {
        guard let table = indexTable(for: path), !values.isEmpty else { return nil }
        var byClass: [IndexValueClass: [SQLValue]] = [:]
        for value in values {
            guard let (cls, sql) = IndexValueClass.classify(value) else { return nil }
            byClass[cls, default: []].append(sql)
        }
        let pathParam = bind(.text(path.description))
        if rowProbes {
            guard byClass.count == 1, let (cls, sqlValues) = byClass.first.map({ ($0.key, $0.value) }) else { return nil }
            let value = sqlValues.count == 1 ? "= \(bind(sqlValues[0]))" : "IN (" + sqlValues.map { bind($0) }.joined(separator: ",") + ")"
            return "EXISTS (SELECT 1 FROM \(table) WHERE path = \(pathParam) AND k = \(cls.rawValue) AND v \(value) AND rid = \(Self.rowIDColumn))"
        }
        if values.count == 1, let (cls, sql) = byClass.first.map({ ($0.key, $0.value[0]) }) {
            // (path, k, v) fixed: the primary key yields each rid once, in rid order.
            let subquery = "SELECT rid FROM \(table) WHERE path = \(pathParam) AND k = \(cls.rawValue) AND v = \(bind(sql))"
            orderedIndexParts.insert(subquery)
            return indexClause(subquery)
        }
        let terms = byClass.sorted { $0.key.rawValue < $1.key.rawValue }.map { cls, sqlValues in
            "(k = \(cls.rawValue) AND v IN (" + sqlValues.map { bind($0) }.joined(separator: ",") + "))"
        }
        return indexClause("SELECT rid FROM \(table) WHERE path = \(pathParam) AND (\(terms.joined(separator: " OR ")))")
    }

    /// A range condition through the multikey index, for numbers and strings.
    func indexedComparison(_ path: FieldPath, _ comparison: Filter.Comparison, _ value: JSONValue) -> String? {
        guard !rowProbes, let table = indexTable(for: path), let (cls, sql) = IndexValueClass.classify(value), cls != .bool else { return nil }
        return indexClause("SELECT rid FROM \(table) WHERE path = \(bind(.text(path.description))) AND k = \(cls.rawValue) AND v \(comparison.sqlOperator) \(bind(sql))")
    }

    /// A lower and an upper bound of one type as a single index range, when
    /// the path never held an array. (Through an array, MongoDB lets each
    /// bound match a different element, so the bounds must stay apart.)
    /// - Returns: the clause and the positions of the operators it covers.
    func indexedRange(_ path: FieldPath, _ ops: [Filter.Operator]) -> (String, Set<Int>)? {
        guard !rowProbes, let table = indexTable(for: path) else { return nil }
        func bound(lower: Bool) -> (position: Int, comparison: Filter.Comparison, value: JSONValue)? {
            for (position, op) in ops.enumerated() {
                if case .compare(let comparison, let value) = op, comparison.isLower == lower { return (position, comparison, value) }
            }
            return nil
        }
        guard let lower = bound(lower: true), let upper = bound(lower: false),
              let (lowClass, lowValue) = IndexValueClass.classify(lower.value),
              let (highClass, highValue) = IndexValueClass.classify(upper.value),
              lowClass == highClass, lowClass != .bool, !isMultikey(path.description) else { return nil }
        let sql = indexClause("SELECT rid FROM \(table) WHERE path = \(bind(.text(path.description))) AND k = \(lowClass.rawValue) AND v \(lower.comparison.sqlOperator) \(bind(lowValue)) AND v \(upper.comparison.sqlOperator) \(bind(highValue))")
        return (sql, [lower.position, upper.position])
    }
}
