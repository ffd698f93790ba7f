import JSON

/// A compiled filter: a SQL boolean over the document row `d`, its
/// parameters, and a distance expression when the filter asked for `$nearSphere`.
public struct CompiledFilter: Sendable {
    public var whereSQL: String
    public var params: [SQLValue]
    public var nearestFirst: String?
    /// When the whole filter is an AND of index look-ups: their `SELECT rid …`
    /// subqueries, so a count can be answered from the index alone.
    public var indexOnly: [String]?
    /// When the whole filter is one index look-up that yields each row at
    /// most once, in row order (a single-value equality): a list can walk
    /// the index and stop at its limit instead of gathering every match.
    public var streamable: String?
    /// The index look-ups among the filter's top-level conditions (each
    /// narrows the whole match): a plan estimates the matches from them.
    public var drivingParts: [String] = []
    /// The R*Tree subqueries of `$geoWithin` boxes, for estimating how many points a box holds.
    public var geoBoxes: [String] = []
    /// The `$nearSphere` search, when the field has a geo index: a list may
    /// widen a box around the centre step by step instead of measuring every point.
    public var nearest: NearestSearch?
    /// A `$geoWithin` every match must satisfy (a top-level condition), when
    /// its field has a geo index: a list may walk its points in row order.
    public var geoDriver: GeoDriver?
    /// The `$nearSphere`'s field and centre, on any engine.
    public var nearPoint: NearPoint?
}

/// The bounding box of a `$geoWithin` on a geo-indexed field: its R*Tree,
/// its points table, and the box as bound parameters.
public struct GeoDriver: Sendable {
    let rtree: String
    package let points: String
    let minX: String, maxX: String, minY: String, maxY: String
    /// The box a little wider, for the points table's doubles.
    let wideMinX: String, wideMaxX: String, wideMinY: String, wideMaxY: String

    /// True when the points table's row `alias` lies in the (widened) box.
    package func holds(_ alias: String) -> String {
        "\(alias).x BETWEEN \(wideMinX) AND \(wideMaxX) AND \(alias).y BETWEEN \(wideMinY) AND \(wideMaxY)"
    }

    /// The R*Tree's entries overlapping the box (entries are 32-bit boxes rounded outwards).
    package var gather: String { "SELECT id FROM \(rtree) WHERE maxX >= \(minX) AND minX <= \(maxX) AND maxY >= \(minY) AND minY <= \(maxY)" }
}

/// A nearest-first search a list can run as widening boxes on the R*Tree.
public struct NearestSearch: Sendable {
    package let table: String
    package let centre: (Double, Double)
    package let maxMetres: Double?
}

/// Renders a parsed `Filter` as SQL that runs inside the database, through
/// an engine's `SQLDialect`, using the collection's indexes where they apply.
///
/// Field conditions follow MongoDB's path rules: a condition on an array
/// matches when any element matches, paths descend through arrays of
/// documents, numeric components index arrays, and `null` matches a missing
/// field. Every value from the filter is bound as a parameter.
public final class FilterCompiler {
    let dialect: any SQLDialect
    let layout: CollectionLayout?
    package var params: [SQLValue] = []
    var aliasCount = 0
    var nearestFirst: String?
    /// Off while compiling inside `$elemMatch`, where the row's indexes do not apply.
    package var useIndexes = true
    /// For access rules: an equality on an indexed field is tested for the
    /// row at hand with one lookup of the index's primary key (path, class,
    /// value, rid) instead of reading the document, and no index drives the
    /// statement (a rule guards each row; it never chooses which rows are read).
    package var rowProbes = false
    /// Clauses made only of index look-ups, and their `SELECT rid` subqueries.
    var indexParts: [String: [String]] = [:]
    /// Index subqueries that yield each row at most once, in row order.
    var orderedIndexParts: Set<String> = []
    /// Whether an indexed path has ever held an array (its index is multikey).
    /// Only a path that has not may combine range bounds into one index range.
    public var isMultikey: (String) -> Bool = { _ in true }
    /// The index look-ups among the top-level conditions.
    var drivingParts: [String] = []
    var geoBoxes: [String] = []
    var nearest: NearestSearch?
    /// Test a `$geoWithin` box per row (a look-up by row id in the points
    /// table) instead of gathering every point in it first.
    package var geoPerRow = false
    /// Conditions that imply a `$geoWithin` box, and that box.
    var geoDrivers: [String: GeoDriver] = [:]
    var nearPoint: NearPoint?
    /// Another engine's spatial index: a condition that keeps every row
    /// whose point at the path lies in the region (and may keep others), or
    /// nil when the path has none. Its SQL binds through the given function.
    public var geoCandidates: ((FieldPath, GeoRegion, (SQLValue) -> String) -> String?)?
    /// Another engine's table of the points stored at a path of the
    /// document: one row `(rid, x, y)` per row whose field holds a point,
    /// `x` and `y` exactly the numbers `overPoint` reads from the document;
    /// nil when the path has none. Geo tests then read those two columns.
    public var pointTable: ((FieldPath) -> String?)?
    /// Another engine's sorted index on a top-level field: the condition
    /// `field op value` (`$eq`, `$gt`, `$gte`, `$lt`, `$lte`) written on the
    /// index's own expressions, or nil to compile it generically. It must
    /// hold exactly where the generic condition holds on a row whose field
    /// is not an array (the engine makes sure no row's is; see
    /// `PostgresKeyConditions`). Its SQL binds through the given function.
    public var keyCondition: ((String, String, JSONValue, (SQLValue) -> String) -> String?)?

    /// Binds into another statement's parameters instead of `params` (a rule
    /// rendered into a read that has its own).
    var statementBind: ((SQLValue) -> String)?
    /// The prefix of the aliases this compiler makes, distinct per compiler in one statement.
    var aliasPrefix = "j"

    /// The SQL expression holding the document's JSON text.
    public static let documentColumn = "d.doc"
    public static let rowIDColumn = "d.rid"
    public static let idColumn = "d.id"

    public init(dialect: any SQLDialect, layout: CollectionLayout? = nil) {
        self.dialect = dialect
        self.layout = layout
    }

    /// Parses and compiles `filter`, which must be a JSON object (an empty one matches all).
    public func compile(_ filter: JSONValue) throws(QueryError) -> CompiledFilter {
        try compile(try Filter(filter))
    }

    /// Renders a parsed filter as SQL. What can still fail is only what this
    /// engine lacks (a geo shape, a regular expression it cannot translate).
    public func compile(_ filter: Filter) throws(QueryError) -> CompiledFilter {
        let sql = try compileClauses(filter.clauses, root: .path(base: Self.documentColumn, steps: []), topLevel: true)
        let parts = indexParts[sql]
        let streamable = parts.flatMap { $0.count == 1 && orderedIndexParts.contains($0[0]) ? $0[0] : nil }
        return CompiledFilter(whereSQL: sql, params: params, nearestFirst: nearestFirst, indexOnly: parts, streamable: streamable,
                              drivingParts: drivingParts, geoBoxes: geoBoxes, nearest: nearest, geoDriver: geoDrivers[sql], nearPoint: nearPoint)
    }

    package func bind(_ value: SQLValue) -> String {
        if let statementBind { return statementBind(value) }
        params.append(value)
        return dialect.placeholder(params.count, for: value)
    }

    func nextAlias() -> String {
        aliasCount += 1
        return "\(aliasPrefix)\(aliasCount)"
    }

    func typeOf(_ ref: ValueRef) -> String { dialect.typeOf(ref, bind: bind) }
    func valueOf(_ ref: ValueRef) -> String { dialect.valueOf(ref, bind: bind) }
    func numberOf(_ ref: ValueRef) -> String { dialect.numberOf(valueOf(ref)) }
    func stringOf(_ ref: ValueRef) -> String { dialect.stringOf(valueOf(ref)) }

    /// `a OP b OP c …` as a balanced tree, so a long list never exceeds
    /// SQLite's expression depth (1000).
    func balanced(_ parts: [String], _ op: String) -> String {
        guard parts.count > 1 else { return parts.first.map { "(\($0))" } ?? (op == "AND" ? dialect.trueSQL : dialect.falseSQL) }
        let middle = parts.count / 2
        return "(" + balanced(Array(parts[..<middle]), op) + " \(op) " + balanced(Array(parts[middle...]), op) + ")"
    }

    /// A document-level filter: every clause must hold.
    /// - Parameter topLevel: the filter itself, whose index look-ups drive a plan.
    func compileClauses(_ clauses: [Filter.Clause], root: ValueRef, topLevel: Bool = false) throws(QueryError) -> String {
        var compiled: [String] = []
        for clause in clauses {
            switch clause {
            case .group(let group, let entries):
                var parts: [String] = []
                for entry in entries { parts.append(try compileClauses(entry, root: root)) }
                let joined = balanced(parts, group == .and ? "AND" : "OR")
                compiled.append(group == .nor ? dialect.not(joined) : joined)
            case .equals(let path, let value):
                compiled.append(equality(path, value, root: root))
            case .field(let path, let ops):
                compiled.append(try compileOperators(ops, on: path, root: root, expand: true))
            }
        }
        if topLevel { drivingParts = compiled.compactMap { indexParts[$0] }.flatMap { $0 } }
        return conjunction(compiled)
    }

    /// `(a AND b …)`, remembering when every part is an index look-up.
    func conjunction(_ clauses: [String]) -> String {
        guard !clauses.isEmpty else { return dialect.trueSQL }
        // A long chain (many `$all` values) as a balanced tree: SQLite's expression depth is 1000.
        let sql = clauses.count > 64 ? balanced(clauses, "AND") : "(" + clauses.joined(separator: " AND ") + ")"
        let parts = clauses.map { indexParts[$0] }
        if parts.allSatisfy({ $0 != nil }) { indexParts[sql] = parts.flatMap { $0! } }
        // A conjunction implies each of its parts' boxes.
        if let driver = clauses.lazy.compactMap({ self.geoDrivers[$0] }).first { geoDrivers[sql] = driver }
        return sql
    }

    /// Wraps an index subquery as a row condition and remembers it.
    func indexClause(_ subquery: String) -> String {
        let sql = "\(Self.rowIDColumn) IN (\(subquery))"
        indexParts[sql] = [subquery]
        return sql
    }

    func equality(_ path: FieldPath, _ value: JSONValue, root: ValueRef) -> String {
        if let indexed = indexedEquality(path, [value]) { return indexed }
        if let keyed = keyed(path.components[...], "$eq", value, root: root) { return keyed }
        if useIndexes, path.components == ["_id"], case .string(let s) = value { return "\(Self.idColumn) = \(bind(.text(s)))" }
        return anyValue(root, path.components[...], expand: true) { self.equals($0, value) }
    }

    /// `keyCondition`'s SQL for a top-level field of the document itself
    /// (not inside `$elemMatch`), when it gives one.
    func keyed(_ path: ArraySlice<String>, _ op: String, _ value: JSONValue, root: ValueRef) -> String? {
        guard useIndexes, let keyCondition, path.count == 1, let field = path.first,
              case .path(let base, let steps) = root, base == Self.documentColumn, steps.isEmpty else { return nil }
        return keyCondition(field, op, value, bind)
    }

    /// SQL true when some value reached along `path` from `root`, a document,
    /// satisfies `predicate`.
    ///
    /// The first key is a plain lookup. The rest of the path is walked by
    /// `SQLDialect.walk`, whose rows are every value it reaches, so the SQL
    /// grows linearly with the path and `predicate` is used at most twice.
    ///
    /// - Parameter expand: also try the elements when the final value is an
    ///   array (not for one reached by position at the end of the path).
    func anyValue(_ root: ValueRef, _ path: ArraySlice<String>, expand: Bool, _ predicate: (ValueRef) -> String) -> String {
        guard let first = path.first else { return leaf(root, expand: expand, gate: nil, predicate) }
        let start = root.child(.key(first), dialect)
        let steps = path.dropFirst().map { PathWalkStep(key: $0, index: FieldPath.isArrayIndex($0) ? Int($0) : nil) }
        guard !steps.isEmpty else { return leaf(start, expand: expand, gate: nil, predicate) }
        // Two steps run faster as two nested one-step walks than as the
        // recursive form; nesting stays shallow, as SQLite's parser needs.
        let walks = steps.count == 2 ? [[steps[0]], [steps[1]]] : [steps]
        return walked(start, walks[...], expand: expand, predicate)
    }

    /// `EXISTS` over the rows of the first walk, then the next from each of them.
    private func walked(_ ref: ValueRef, _ walks: ArraySlice<[PathWalkStep]>, expand: Bool,
                        _ predicate: (ValueRef) -> String) -> String {
        guard let steps = walks.first else { return dialect.falseSQL }
        let alias = nextAlias()
        let from = dialect.walk(from: ref, steps: steps, alias: alias, bind: bind)
        let rest = walks.dropFirst()
        let inner: String
        if rest.isEmpty {
            let gate = steps.last?.index != nil && expand ? "\(alias).expand" : nil
            inner = leaf(.element(alias: alias), expand: expand, gate: gate, predicate)
        } else {
            inner = walked(.element(alias: alias), rest, expand: expand, predicate)
        }
        return "EXISTS (SELECT 1 FROM \(from) WHERE \(inner))"
    }

    /// `predicate` on the value itself or, with `expand` (and `gate`, a
    /// column that must be true), on any element when it is an array.
    func leaf(_ ref: ValueRef, expand: Bool, gate: String?, _ predicate: (ValueRef) -> String) -> String {
        let own = predicate(ref)
        guard expand else { return own }
        let alias = nextAlias()
        let from = dialect.elements(of: ref, alias: alias, bind: bind)
        let inner = predicate(.element(alias: alias))
        let gated = gate.map { "\($0) AND " } ?? ""
        return "(\(own) OR (\(gated)\(dialect.isArray(typeOf(ref))) AND EXISTS (SELECT 1 FROM \(from) WHERE \(inner))))"
    }

    /// SQL true when the value at `ref` equals `literal`, with MongoDB's type rules.
    func equals(_ ref: ValueRef, _ literal: JSONValue) -> String {
        let t = typeOf(ref)
        switch literal {
        case .null: return "(\(t) IS NULL OR \(dialect.isNull(t)))"
        case .bool(let b): return "(\(dialect.isBool(t, b)))"
        case .int(let i): return "(\(dialect.isNumber(t)) AND \(numberOf(ref)) = \(bind(.int(i))))"
        case .double(let d): return "(\(dialect.isNumber(t)) AND \(numberOf(ref)) = \(bind(.double(d))))"
        case .string(let s): return "(\(dialect.isString(t)) AND \(stringOf(ref)) = \(bind(.text(s))))"
        case .array: return "(\(dialect.isArray(t)) AND \(dialect.containerEquals(ref, text: literal.jsonText, bind: bind)))"
        case .object: return "(\(dialect.isObject(t)) AND \(dialect.containerEquals(ref, text: literal.jsonText, bind: bind)))"
        }
    }
}
