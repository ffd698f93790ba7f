import Store

extension Redaction {
    /// The document expression with the fields removed where they must be.
    func selectSQL(_ bind: (SQLValue) -> String) -> String? {
        guard !fields.isEmpty else { return nil }
        let paths = fields.map { bind(.text(SQLiteDialect.jsonPath([.key($0)]))) }.joined(separator: ", ")
        let removed = "json_remove(d.doc, \(paths))"
        guard let exceptID else { return removed }
        return "CASE WHEN d.id = \(bind(.text(exceptID))) THEN d.doc ELSE \(removed) END"
    }
}
