/// Top-level fields removed from every row except the caller's own, such as
/// a user's email in the member directory.
public struct Redaction: Sendable {
    public let fields: [String]
    /// The row id that keeps every field (the caller's own record), if any.
    public let exceptID: String?

    public init(fields: [String], exceptID: String?) {
        self.fields = fields
        self.exceptID = exceptID
    }

    /// The document expression with the fields removed where they must be.
    func selectSQL(_ bind: (SQLValue) -> String) -> String? {
        guard !fields.isEmpty else { return nil }
        let paths = fields.map { bind(.text(SQLiteDialect.jsonPath([.key($0)]))) }.joined(separator: ", ")
        let removed = "json_remove(d.doc, \(paths))"
        guard let exceptID else { return removed }
        return "CASE WHEN d.id = \(bind(.text(exceptID))) THEN d.doc ELSE \(removed) END"
    }
}
