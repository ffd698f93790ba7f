import Store

/// SQLite's JSON1 functions as a `SQLDialect`.
public struct SQLiteDialect: SQLDialect {
    public init() {}

    public func placeholder(_ n: Int) -> String { "?\(n)" }
    public func placeholder(_ n: Int, for value: SQLValue) -> String { placeholder(n) }
    public var trueSQL: String { "1" }
    public var falseSQL: String { "0" }
    public func not(_ sql: String) -> String { "NOT coalesce((\(sql)), 0)" }
    public func rowJSON(_ alias: String) -> String { ValueRef.json(ofRow: alias) }
    /// `json_extract` already gives numbers, text and containers' JSON text.
    public func numberOf(_ value: String) -> String { value }
    public func stringOf(_ value: String) -> String { value }
    public func jsonTextOf(_ value: String) -> String { value }
    public func integerPart(_ number: String) -> String { "CAST(\(number) AS INTEGER)" }
    /// PCRE2 itself runs the pattern (`RegexFunction`): bound as written.
    public func regexSource(_ pattern: String, flags: String) throws(QueryError) -> (pattern: String, flags: String) { (pattern, flags) }
    public var supportsGeo: Bool { true }

    /// A JSON path such as `$."address"."city"[0]`, bound as a parameter.
    static func jsonPath(_ steps: [PathStep]) -> String {
        var p = "$"
        for s in steps {
            switch s {
            case .key(let k): p += ".\"\(k)\""
            case .index(let i): p += "[\(i)]"
            }
        }
        return p
    }

    public func typeOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps):
            return steps.isEmpty ? "json_type(\(base))" : "json_type(\(base), \(bind(.text(Self.jsonPath(steps)))))"
        case .element(let alias): return "\(alias).type"
        }
    }

    public func valueOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps):
            return steps.isEmpty ? "json_extract(\(base), '$')" : "json_extract(\(base), \(bind(.text(Self.jsonPath(steps)))))"
        case .element(let alias): return "\(alias).value"
        }
    }

    public func elements(of ref: ValueRef, alias: String, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps):
            return steps.isEmpty ? "json_each(\(base)) AS \(alias)" : "json_each(\(base), \(bind(.text(Self.jsonPath(steps))))) AS \(alias)"
        case .element(let outer): return "json_each(\(ValueRef.json(ofRow: outer))) AS \(alias)"
        }
    }

    public func arrayLength(_ ref: ValueRef, bind: (SQLValue) -> String) -> String {
        switch ref {
        case .path(let base, let steps):
            return steps.isEmpty ? "json_array_length(\(base))" : "json_array_length(\(base), \(bind(.text(Self.jsonPath(steps)))))"
        case .element(let alias): return "json_array_length(\(ValueRef.json(ofRow: alias)))"
        }
    }

    public func regexMatch(value: String, pattern: String, flags: String) -> String {
        "regexp(\(pattern), \(value), \(flags))"
    }

    public func isNumber(_ t: String) -> String { "\(t) IN ('integer','real')" }
    public func isString(_ t: String) -> String { "\(t) = 'text'" }
}
