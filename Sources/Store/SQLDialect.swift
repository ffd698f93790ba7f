/// Where a JSON value lives, in terms a dialect can render to SQL.
public indirect enum ValueRef: Sendable {
    /// The value at `steps` inside the JSON held by SQL expression `base`.
    case path(base: String, steps: [PathStep])
    /// The current row of a JSON array iteration named `alias`.
    case element(alias: String)
}

/// One key of a dotted path past its first, with its array position when
/// the key is numeric (`tags.0` means the field "0" or the first element).
public struct PathWalkStep: Sendable {
    public let key: String
    public let index: Int?
}

/// The SQL a database needs to express JSON queries.
///
/// The filter compiler speaks only through this seam, so a PostgreSQL dialect
/// (jsonb_typeof, jsonb_array_elements, `~`) can stand beside SQLite's.
public protocol SQLDialect: Sendable {
    /// A placeholder for the parameter numbered `n` (1-based), which holds
    /// `value` (a dialect with typed parameters casts it to `value`'s type).
    func placeholder(_ n: Int, for value: SQLValue) -> String
    /// SQL's true and false as the database writes them.
    var trueSQL: String { get }
    var falseSQL: String { get }
    /// `NOT` that treats SQL NULL as false first, so negations keep missing fields.
    func not(_ sql: String) -> String
    /// The JSON held by iteration row `alias` where a JSON function may read
    /// it, or SQL NULL when the row holds no JSON container.
    func rowJSON(_ alias: String) -> String
    /// A `valueOf` expression as a number to compare with a number
    /// parameter (only meaningful where `isNumber` holds; never an error elsewhere).
    func numberOf(_ value: String) -> String
    /// A `valueOf` expression as text to compare with a text parameter,
    /// byte by byte (only meaningful where `isString` holds).
    func stringOf(_ value: String) -> String
    /// A `valueOf` expression of an array or object as its stored JSON text.
    func jsonTextOf(_ value: String) -> String
    /// SQL true when the array or object at `ref` is stored as exactly the
    /// JSON text `text` (bound here as a text parameter); key order counts.
    func containerEquals(_ ref: ValueRef, text: String, bind: (SQLValue) -> String) -> String
    /// A number's integer part, truncated toward zero and held to 64 bits.
    func integerPart(_ number: String) -> String
    /// The pattern and flags to bind for a `$regex` that PCRE2 accepted, or
    /// a refusal when this database's engine would not match it as PCRE2 does.
    func regexSource(_ pattern: String, flags: String) throws(QueryError) -> (pattern: String, flags: String)
    /// Whether the geo operators compile for this database.
    var supportsGeo: Bool { get }
    /// Whether `$geoWithin`'s shape (`$box`, `$center`, …) compiles here (`SQLDialect+Geo`).
    func supportsGeoShape(_ shape: String) -> Bool
    /// `expr` over the point whose coordinates are the `valueOf` expressions
    /// `lng` and `lat`, as numbers; SQL NULL when either is not a number.
    func overPoint(lng: String, lat: String, _ expr: (String, String) -> String) -> String
    /// The great-circle distance in radians between `(x, y)` and `(cx, cy)`, all in degrees.
    func greatCircle(_ x: String, _ y: String, cx: String, cy: String) -> String
    /// The JSON type name of `ref`, or SQL NULL when it is missing.
    func typeOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String
    /// The SQL value of `ref`: scalars as SQL scalars, containers as JSON text.
    func valueOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String
    /// A FROM item iterating the elements of the array `ref`, named `alias`.
    func elements(of ref: ValueRef, alias: String, bind: (SQLValue) -> String) -> String
    /// A FROM item, named `alias`, whose rows `(type, value, expand)` are the
    /// values reached from `ref` along `steps`, by MongoDB's rules at each
    /// step: the key of a value that is not an array (missing, a row with a
    /// NULL type, when the value is no document); in an array, the key of
    /// each element that is a document (missing ones too) and, for a numeric
    /// key, the element at `index` if there is one. `expand` is false for a
    /// value reached by position at the last step. Its rows are
    /// `.element(alias:)` values. The SQL grows linearly with `steps`.
    func walk(from ref: ValueRef, steps: [PathWalkStep], alias: String, bind: (SQLValue) -> String) -> String
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

/// The type names both engines' JSON functions share (`json_type` and
/// `json_typeof` agree on these); numbers and strings differ per dialect.
extension SQLDialect {
    /// The stored text of the container (`jsonTextOf`) against the literal's.
    public func containerEquals(_ ref: ValueRef, text: String, bind: (SQLValue) -> String) -> String {
        "\(jsonTextOf(valueOf(ref, bind: bind))) = \(bind(.text(text)))"
    }

    public func isBool(_ type: String, _ value: Bool) -> String { "\(type) = '\(value ? "true" : "false")'" }
    public func isNull(_ type: String) -> String { "\(type) = 'null'" }
    public func isArray(_ type: String) -> String { "\(type) = 'array'" }
    public func isObject(_ type: String) -> String { "\(type) = 'object'" }
}

extension ValueRef {
    /// The value one step further in.
    package func child(_ step: PathStep, _ dialect: any SQLDialect) -> ValueRef {
        switch self {
        case .path(let base, let steps): return .path(base: base, steps: steps + [step])
        case .element(let alias): return .path(base: dialect.rowJSON(alias), steps: [step])
        }
    }

    /// The value of iteration row `alias` where a JSON function may read it.
    ///
    /// A row's value is JSON text only for containers; a string row holds
    /// plain text, which would make a JSON function fail. Conditions on the
    /// row's type are no guard: SQLite may propagate `type = 'array'` into
    /// other terms and evaluate those first. So the text is checked itself,
    /// and anything that is not JSON reads as SQL NULL (no value).
    package static func json(ofRow alias: String) -> String {
        "CASE WHEN json_valid(\(alias).value) THEN \(alias).value END"
    }
}
