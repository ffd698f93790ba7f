import Store

/// PostgreSQL's `json` functions as a `SQLDialect`.
///
/// Documents are stored as `json` (the text as written, see
/// docs/ENGINES.md), so a container's value is its stored text exactly as
/// SQLite's `json_extract` gives it, and `->` reads a path step by step. Every
/// parameter is cast to its value's type (`$1::numeric`, `$2::text`), so
/// no comparison depends on PostgreSQL's type inference. A value is
/// converted only inside a `CASE` on its JSON type: a cast never meets a
/// value of another type, whatever order the planner evaluates the
/// conditions in. Strings compare byte by byte (`COLLATE "C"`), as SQLite's
/// BINARY collation does, whatever the database's locale.
///
/// A type is `json_typeof`'s name, except that booleans are `true` or
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
    /// Element rows hold `json` already (see `elements`).
    public func rowJSON(_ alias: String) -> String { "\(alias).value" }

    /// The `json` at `ref`, or SQL NULL when it is missing. A key step reads
    /// only a document's member (`->` with text is NULL on an array, as
    /// SQLite's `."key"` is) and a position step only an array's element.
    func json(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps):
            var sql = "(\(base))"
            for step in steps {
                switch step {
                case .key(let k): sql = "(\(sql) -> \(Self.keySQL(k, bind)))"
                case .index(let i): sql = "(\(sql) -> \(Int64(i))::integer)"
                }
            }
            return sql
        case .element(let alias): return "\(alias).value"
        }
    }

    /// A member name in a path: an escaped literal, so the statement's text
    /// is the declared index's expression and one generic plan serves every
    /// value (a parameter here would need a fresh plan per execution to match
    /// the index). A name holding NUL (refused in filters before this) stays a
    /// parameter: libpq's statement text ends at a NUL.
    static func keySQL(_ key: String, _ bind: (SQLValue) -> String) -> String {
        key.utf8.contains(0) ? bind(.text(key)) : PostgresDocumentWriter.literal(.text(key))
    }

    /// The type name (booleans as `true`/`false`) of a `json` expression.
    static func type(ofJSON json: String) -> String {
        "CASE json_typeof(\(json)) WHEN 'boolean' THEN \(json)::text ELSE json_typeof(\(json)) END"
    }

    public func typeOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path: return "(\(Self.type(ofJSON: json(ref, bind: bind))))"
        case .element(let alias): return "\(alias).type"
        }
    }

    public func valueOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String { json(ref, bind: bind) }

    /// `value` is a `json` expression (`valueOf`); it may appear more than once, its parameters bound once.
    public func numberOf(_ value: String) -> String {
        "(CASE WHEN json_typeof(\(value)) = 'number' THEN (\(value) #>> '{}')::numeric END)"
    }

    public func stringOf(_ value: String) -> String {
        "((CASE WHEN json_typeof(\(value)) = 'string' THEN \(value) #>> '{}' END) COLLATE \"C\")"
    }

    public func jsonTextOf(_ value: String) -> String { "((\(value))::text COLLATE \"C\")" }

    /// As SQLite's `CAST(x AS INTEGER)`: toward zero, saturating at 64 bits.
    public func integerPart(_ number: String) -> String {
        "(CASE WHEN \(number) >= 9223372036854775807 THEN 9223372036854775807 WHEN \(number) <= -9223372036854775808 THEN -9223372036854775808 ELSE trunc(\(number)) END)::bigint"
    }

    public func elements(of ref: ValueRef, alias: String, bind: (SQLValue) -> String) -> String {
        let array = json(ref, bind: bind)
        let e = "\(alias)_e"
        return "LATERAL (SELECT \(Self.type(ofJSON: "\(e).v")) AS type, \(e).v AS value"
            + " FROM json_array_elements(CASE WHEN json_typeof(\(array)) = 'array' THEN \(array) END) AS \(e)(v)) AS \(alias)"
    }

    public func arrayLength(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        let j = json(ref, bind: bind)
        return "json_array_length(CASE WHEN json_typeof(\(j)) = 'array' THEN \(j) END)"
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
