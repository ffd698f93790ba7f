import Store

/// One key of a list's order, as SQL over the row `d`.
///
/// A field sorts in MongoDB's order across types: a `bracket` (null and
/// missing, numbers, strings, objects, arrays, booleans) and then the value
/// within it. A built-in column (`_id`, `_createdAt`, `_updatedAt`) is its
/// own value. For a field with a declared value index the expressions are
/// written exactly as that index's (see `SortKey.indexExpressions`), so
/// SQLite can walk the index instead of sorting; otherwise the path is bound.
struct SortKey {
    /// The type bracket, or nil for a built-in column (always text).
    let bracket: String?
    let value: String
    let ascending: Bool
    /// True when an index holds the rows in this key's order.
    let indexed: Bool

    var direction: String { ascending ? "ASC" : "DESC" }

    /// The ORDER BY terms of this key.
    var terms: [String] { (bracket.map { ["\($0) \(direction)"] } ?? []) + ["\(value) \(direction)"] }

    /// Every expression the key compares, bracket first.
    var expressions: [String] { (bracket.map { [$0] } ?? []) + [value] }

    static func make(_ field: String, ascending: Bool, layout: CollectionLayout?, bind: (SQLValue) -> String) -> SortKey {
        switch field {
        case "_id": return SortKey(bracket: nil, value: "d.id", ascending: ascending, indexed: true)
        case "_createdAt": return SortKey(bracket: nil, value: "d.created_at", ascending: ascending, indexed: true)
        case "_updatedAt": return SortKey(bracket: nil, value: "d.updated_at", ascending: ascending, indexed: true)
        default:
            if let layout, layout.indexedPaths.contains(field) {
                let (bracket, value) = indexExpressions(field, document: "d.doc")
                return SortKey(bracket: bracket, value: value, ascending: ascending, indexed: true)
            }
            let path = bind(.text(SQLiteDialect.jsonPath(field.split(separator: ".").map { .key(String($0)) })))
            return SortKey(bracket: bracketSQL("json_type(d.doc, \(path))"), value: "json_extract(d.doc, \(path))",
                           ascending: ascending, indexed: false)
        }
    }

    /// The bracket and value expressions of a declared index on `path`, with
    /// the path as a literal (an index expression cannot hold a parameter).
    /// `path` comes from the operator's configuration, validated by
    /// `FieldPath` (no quote or backslash); a `'` is doubled for SQL.
    static func indexExpressions(_ path: String, document: String) -> (bracket: String, value: String) {
        let json = SQLiteDialect.jsonPath(path.split(separator: ".").map { .key(String($0)) })
        let literal = "'" + json.replacingOccurrences(of: "'", with: "''") + "'"
        return (bracketSQL("json_type(\(document), \(literal))"), "json_extract(\(document), \(literal))")
    }

    /// MongoDB's sort order across types as a number: null and missing 1,
    /// numbers 2, strings 3, objects 4, arrays 5, booleans 6.
    static func bracketSQL(_ type: String) -> String {
        "CASE \(type) WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'false' THEN 6 WHEN 'true' THEN 6 ELSE 1 END"
    }
}
