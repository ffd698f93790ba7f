/// The bounds a filter, sort or `$regex` must keep, so that no request can
/// make the compiler, SQLite or PCRE2 do work out of proportion to its size.
/// Past any of them a query is refused with `QueryError.invalid` (400
/// `InvalidQuery`), whose message names the limit.
public enum QueryLimits {
    /// Parts of a dotted field path (`a.b.c` has 3), in filters, sorts and indexes.
    public static let maxPathParts = 32
    /// Nesting of `$and`, `$or`, `$nor`, `$not` and `$elemMatch`.
    public static let maxDepth = 32
    /// Conditions in one filter: every operator (a bare value counts as one
    /// `$eq`) and every `$all` value, however they are nested, each counted
    /// once per part of its field path (a condition on `a.b.c` counts 3).
    /// This bounds the SQL a filter compiles to at a few hundred kilobytes.
    public static let maxConditions = 1_000
    /// Values in one `$in` or `$nin` list.
    public static let maxListValues = 10_000
    /// Bytes of one `$regex` pattern.
    public static let maxRegexBytes = 1_024
    /// Parentheses (groups of any kind) in one `$regex` pattern.
    public static let maxRegexGroups = 64

    /// `text` cut to `limit` characters, for quoting user input in messages.
    static func excerpt(_ text: String, _ limit: Int = 80) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}
