/// A query that Roost refuses, with a sentence that says why.
public struct QueryError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable { case invalid, unsupportedOperator }
    public let kind: Kind
    public let message: String

    public static func invalid(_ message: String) -> QueryError { QueryError(kind: .invalid, message: message) }

    /// An operator Roost does not run: `$where`, `$function`, `$expr` or an unknown one.
    public static func unsupported(_ op: String) -> QueryError {
        let why: String
        switch op {
        case "$where", "$function", "$accumulator":
            why = "runs server-side JavaScript, which Roost never executes"
        case "$expr": why = "is an aggregation expression, which Roost does not evaluate in filters"
        default: why = "is not a query operator Roost knows"
        }
        return QueryError(kind: .unsupportedOperator, message: "The operator \(op) \(why).")
    }

    public var description: String { message }
}
