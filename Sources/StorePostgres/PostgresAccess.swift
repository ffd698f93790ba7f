import Store

/// `AccessScope`'s row rules as PostgreSQL SQL over the row `d`, exactly as
/// SQLite renders them: the creator, or a user listed in `_acl`'s lists.
/// They read the `jsonb` body (collection tables and `_files` have one), so
/// a private list does not parse each row's `json` text again.
enum PostgresAccess {
    /// `rule` as SQL over the `jsonb` document `body` (the row `d`'s by
    /// default), or nil when every row qualifies.
    static func sql(_ rule: AccessScope.RowRule, body: String = "d.body", _ bind: (SQLValue) -> String) -> String? {
        switch rule {
        case .all: return nil
        case .none: return "FALSE"
        case .listed(let user, let principals, let fields):
            let id = bind(.text(user))
            let names = principals == [user] ? id : principals.map { bind(.text($0)) }.joined(separator: ", ")
            let terms = fields.map { field -> String in
                if field == "creator" { return "(\(body) #>> '{_acl,creator}') = \(id)" }
                // Fixed field names (creator, read, write) from AccessScope, never client text.
                let list = "\(body) #> '{_acl,\(field)}'"
                return "EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(\(list)) = 'array' THEN \(list) END) AS u(v) WHERE u.v IN (\(names)))"
            }
            return "(" + terms.joined(separator: " OR ") + ")"
        case .matching(let rule):
            // Rendered from the tree the in-memory matcher evaluates; one that
            // cannot be (refused at start-up, so never expected) shows nothing.
            return (try? rule.sql(key: "postgresql\u{0}" + body, bind: bind) { record in
                try withoutActuallyEscaping(record) { record in
                    try FilterCompiler.ruleSQL(rule.filter, dialect: PostgresDialect(), document: body, bind: record)
                }
            }) ?? "FALSE"
        }
    }

    /// The WHERE clause of a read: the caller's filter runs only on rows
    /// that pass `visible` (a CASE is evaluated in order whatever the plan).
    static func visibleFirst(_ visible: String?, _ filter: String) -> String {
        guard let visible else { return filter }
        return "CASE WHEN \(visible) THEN (\(filter)) ELSE FALSE END"
    }
}
