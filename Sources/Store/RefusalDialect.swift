/// A dialect that renders placeholder SQL, for running `FilterCompiler`
/// only for its refusals (`FilterMatcher`, which evaluates in memory): it
/// accepts what SQLite's dialect accepts (every pattern PCRE2 takes, every
/// geo shape), so the matcher refuses exactly what the compiler refuses on
/// SQLite, without the engine-neutral `Store` knowing SQLite's SQL.
struct RefusalDialect: SQLDialect {
    func placeholder(_ n: Int, for value: SQLValue) -> String { "?\(n)" }
    var trueSQL: String { "1" }
    var falseSQL: String { "0" }
    func not(_ sql: String) -> String { "NOT (\(sql))" }
    func rowJSON(_ alias: String) -> String { alias }
    func numberOf(_ value: String) -> String { value }
    func stringOf(_ value: String) -> String { value }
    func jsonTextOf(_ value: String) -> String { value }
    func integerPart(_ number: String) -> String { number }
    func regexSource(_ pattern: String, flags: String) throws(QueryError) -> (pattern: String, flags: String) { (pattern, flags) }
    var supportsGeo: Bool { true }
    func typeOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String { Self.name(ref) }
    func valueOf(_ ref: ValueRef, bind: (SQLValue) -> String) -> String { Self.name(ref) }
    func elements(of ref: ValueRef, alias: String, bind: (SQLValue) -> String) -> String { alias }
    func walk(from ref: ValueRef, steps: [PathWalkStep], alias: String, bind: (SQLValue) -> String) -> String { alias }
    func arrayLength(_ ref: ValueRef, bind: (SQLValue) -> String) -> String { Self.name(ref) }
    func regexMatch(value: String, pattern: String, flags: String) -> String { value }
    func isNumber(_ type: String) -> String { type }
    func isString(_ type: String) -> String { type }

    private static func name(_ ref: ValueRef) -> String {
        switch ref {
        case .path(let base, _): return base
        case .element(let alias): return alias
        }
    }
}
