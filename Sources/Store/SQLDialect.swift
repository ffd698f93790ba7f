/// Where a JSON value lives, in terms a dialect can render to SQL.
public indirect enum ValueRef: Sendable {
    /// The value at `steps` inside the JSON held by SQL expression `base`.
    case path(base: String, steps: [PathStep])
    /// The current row of a JSON array iteration named `alias`.
    case element(alias: String)
}

/// The SQL a database needs to express JSON queries.
///
/// The filter compiler speaks only through this seam, so a PostgreSQL dialect
/// (jsonb_typeof, jsonb_array_elements, `~`) can stand beside SQLite's.
public protocol SQLDialect: Sendable {
    /// A placeholder for the parameter numbered `n` (1-based).
    func placeholder(_ n: Int) -> String
    /// The JSON type name of `ref`, or SQL NULL when it is missing.
    func typeOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String
    /// The SQL value of `ref`: scalars as SQL scalars, containers as JSON text.
    func valueOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String
    /// A FROM item iterating the elements of the array `ref`, named `alias`.
    func elements(of ref: ValueRef, alias: String, bind: (SQLValue) -> String) -> String
    /// The number of elements of the array `ref`.
    func arrayLength(_ ref: ValueRef, bind: (SQLValue) -> String) -> String
    /// A boolean: `value` matches the regular expression.
    func regexMatch(value: String, pattern: String, flags: String) -> String

    /// Type predicates over a `typeOf` expression.
    func isNumber(_ type: String) -> String
    func isString(_ type: String) -> String
    func isBool(_ type: String, _ value: Bool) -> String
    func isNull(_ type: String) -> String
    func isArray(_ type: String) -> String
    func isObject(_ type: String) -> String
}

extension ValueRef {
    /// The value one step further in.
    func child(_ step: PathStep) -> ValueRef {
        switch self {
        case .path(let base, let steps): return .path(base: base, steps: steps + [step])
        case .element(let alias): return .path(base: "\(alias).value", steps: [step])
        }
    }
}
