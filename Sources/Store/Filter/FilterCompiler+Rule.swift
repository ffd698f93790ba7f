import JSON

extension FilterCompiler {
    /// An access rule's filter as a SQL condition on the JSON document
    /// `document` (the row's, or a feed row's earlier state), binding its
    /// values through `bind` into the statement that holds it. Indexes are
    /// not used: the condition guards a read, row by row, before anything
    /// of the caller's is evaluated (`DocumentReader.visibleFirst`).
    public static func ruleSQL(_ rule: Filter, dialect: any SQLDialect, document: String = documentColumn,
                               bind: @escaping (SQLValue) -> String) throws(QueryError) -> String {
        let compiler = FilterCompiler(dialect: dialect)
        compiler.useIndexes = false
        compiler.statementBind = bind
        compiler.aliasPrefix = "r"
        return try compiler.compileClauses(rule.clauses, root: .path(base: document, steps: []))
    }
}
