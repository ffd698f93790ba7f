import Store

/// PostgreSQL's `jsonb` functions as a `SQLDialect`.
///
/// A collection's row holds the document twice (docs/ENGINES.md): `doc`,
/// `json`, the text as written and what a read returns, and `body`, the
/// same document as `jsonb` (a stored generated column), which filters,
/// orders and indexes read, so no row's text is parsed again. Where an
/// answer depends on a container's exact text (equality with an object or
/// array literal, where key order matters as on SQLite, and the order of
/// containers) the `json` text is read, and only there.
///
/// Every parameter is cast to its value's type (`$1::numeric`, `$2::text`),
/// so no comparison depends on PostgreSQL's type inference. A value is
/// converted only inside a `CASE` on its JSON type: a cast never meets a
/// value of another type, whatever order the planner evaluates the
/// conditions in. Strings compare byte by byte (`COLLATE "C"`), as SQLite's
/// BINARY collation does, whatever the database's locale.
///
/// A type is `jsonb_typeof`'s name, except that booleans are `true` or
/// `false`, so `isBool` needs no second look at the value.
public struct PostgresDialect: SQLDialect {
    public init() {}

    public func placeholder(_ n: Int, for value: SQLValue) -> String {
        switch value {
        case .null: return "$\(n)"
        case .int: return "$\(n)::bigint"
        case .double: return "$\(n)::numeric"
        case .text: return "$\(n)::text"
        }
    }

    public var trueSQL: String { "TRUE" }
    public var falseSQL: String { "FALSE" }
    public func not(_ sql: String) -> String { "NOT coalesce((\(sql)), FALSE)" }
    /// Element rows hold `jsonb` already (see `elements`).
    public func rowJSON(_ alias: String) -> String { "\(alias).value" }

    /// The `jsonb` expression a path's base names: the `body` column for
    /// the document (`d.doc` in a query, `doc` in an index's DDL), an
    /// element row's `value` as it is.
    static func binaryBase(_ base: String) -> String {
        switch base {
        case FilterCompiler.documentColumn: return "d.body"
        case "doc": return "body"
        // Another alias's row (`k.doc`, a subquery over the same table): its `body`.
        case _ where base.hasSuffix(".doc") && base.dropLast(4).allSatisfy({ $0.isLetter || $0.isNumber }): return base.dropLast(4) + ".body"
        default: return base
        }
    }

    /// The `json` expression a path's base names: the `doc` column itself,
    /// or an element row's `json` beside its `value`. Bases are written by
    /// this dialect and the compiler from aliases only, never from input.
    static func textBase(_ base: String) -> String {
        base == FilterCompiler.documentColumn || base == "doc" ? base : base.replacingOccurrences(of: ".value", with: ".json")
    }

    /// The `jsonb` at `ref`, or SQL NULL when it is missing. A key step reads
    /// only a document's member (`->` with text is NULL on an array, as
    /// SQLite's `."key"` is) and a position step only an array's element.
    func json(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps): return Self.walkPath("(\(Self.binaryBase(base)))", steps, bind)
        case .element(let alias): return "\(alias).value"
        }
    }

    /// The stored `json` text at `ref`: the container text that equality
    /// with an object or array, and the order of containers, compare.
    func text(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps): return Self.walkPath("(\(Self.textBase(base)))", steps, bind)
        case .element(let alias): return "\(alias).json"
        }
    }

    static func walkPath(_ start: String, _ steps: [PathStep], _ bind: (SQLValue) -> String) -> String {
        var sql = start
        for step in steps {
            switch step {
            case .key(let k): sql = "(\(sql) -> \(keySQL(k, bind)))"
            case .index(let i): sql = "(\(sql) -> \(Int64(i))::integer)"
            }
        }
        return sql
    }

    /// A member name in a path: an escaped literal, so the statement's text
    /// is the declared index's expression and one generic plan serves every
    /// value (a parameter here would need a fresh plan per execution to match
    /// the index). A name holding NUL (refused in filters before this) stays a
    /// parameter: libpq's statement text ends at a NUL.
    static func keySQL(_ key: String, _ bind: (SQLValue) -> String) -> String {
        key.utf8.contains(0) ? bind(.text(key)) : PostgresDocumentWriter.literal(.text(key))
    }

    /// The type name (booleans as `true`/`false`) of a `jsonb` expression.
    static func type(ofJSON json: String) -> String {
        "CASE jsonb_typeof(\(json)) WHEN 'boolean' THEN \(json)::text ELSE jsonb_typeof(\(json)) END"
    }

    public func typeOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path: return "(\(Self.type(ofJSON: json(ref, bind: bind))))"
        case .element(let alias): return "\(alias).type"
        }
    }

    public func valueOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String { json(ref, bind: bind) }

    /// `value` is a `jsonb` expression (`valueOf`); it may appear more than once, its parameters bound once.
    public func numberOf(_ value: String) -> String {
        "(CASE WHEN jsonb_typeof(\(value)) = 'number' THEN (\(value))::numeric END)"
    }

    public func stringOf(_ value: String) -> String {
        "((CASE WHEN jsonb_typeof(\(value)) = 'string' THEN \(value) #>> '{}' END) COLLATE \"C\")"
    }

    /// `jsonb`'s own text, which is not the stored text: equality with a
    /// container goes through `containerEquals`, which reads `doc`.
    public func jsonTextOf(_ value: String) -> String { "((\(value))::text COLLATE \"C\")" }

    /// The `jsonb` values first (cheap, and a necessary condition: equal
    /// text is an equal value), then, only for an equal value, the stored
    /// text, whose key order must match too.
    public func containerEquals(_ ref: ValueRef, text literal: String, bind: (SQLValue) -> String) -> String {
        let value = json(ref, bind: bind), p = bind(.text(literal))
        return "(CASE WHEN \(value) = (\(p))::jsonb THEN (\(text(ref, bind: bind))::text COLLATE \"C\") = \(p) ELSE FALSE END)"
    }

    /// As SQLite's `CAST(x AS INTEGER)`: toward zero, saturating at 64 bits.
    public func integerPart(_ number: String) -> String {
        "(CASE WHEN \(number) >= 9223372036854775807 THEN 9223372036854775807 WHEN \(number) <= -9223372036854775808 THEN -9223372036854775808 ELSE trunc(\(number)) END)::bigint"
    }

    /// Rows `(type, value, json)`: `value` the element as `jsonb`, `json`
    /// its stored text, read by position only where a query uses it.
    public func elements(of ref: ValueRef, alias: String, bind: (SQLValue) -> String) -> String {
        let array = json(ref, bind: bind)
        let e = "\(alias)_e"
        return "LATERAL (SELECT \(Self.type(ofJSON: "\(e).v")) AS type, \(e).v AS value, (\(text(ref, bind: bind)) -> (\(e).n - 1)::integer) AS json"
            + " FROM jsonb_array_elements(CASE WHEN jsonb_typeof(\(array)) = 'array' THEN \(array) END) WITH ORDINALITY AS \(e)(v, n)) AS \(alias)"
    }

    public func arrayLength(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        let j = json(ref, bind: bind)
        return "jsonb_array_length(CASE WHEN jsonb_typeof(\(j)) = 'array' THEN \(j) END)"
    }

    public func regexMatch(value: String, pattern: String, flags: String) -> String {
        "regexp_like(\(value), \(pattern), \(flags))"
    }

    public func regexSource(_ pattern: String, flags: String) throws(QueryError) -> (pattern: String, flags: String) {
        try RegexTranslation.translate(pattern, flags: flags)
    }

    public var supportsGeo: Bool { true }

    public func isNumber(_ t: String) -> String { "\(t) = 'number'" }
    public func isString(_ t: String) -> String { "\(t) = 'string'" }
}
