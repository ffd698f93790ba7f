/// A value bound to, or read from, a SQL statement.
public enum SQLValue: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
}
