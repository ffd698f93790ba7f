import JSON

extension FilterCompiler {
    /// An access rule's filter as a SQL condition on the JSON document
    /// `document` (the row's, or a feed row's earlier state), binding its
    /// values through `bind` into the statement that holds it. The
    /// condition guards a read, row by row, before anything of the caller's
    /// is evaluated (`DocumentReader.visibleFirst`): no index drives it.
    /// Given the row's `layout` (the current row, never an earlier state),
    /// an equality on an indexed field is one primary-key lookup of the
    /// index for that row (`rowProbes`) rather than a read of the document.
    public static func ruleSQL(_ rule: Filter, dialect: any SQLDialect, document: String = documentColumn,
                               layout: CollectionLayout? = nil, bind: @escaping (SQLValue) -> String) throws(QueryError) -> String {
        let current = layout != nil && document == documentColumn
        let compiler = FilterCompiler(dialect: dialect, layout: current ? layout : nil)
        compiler.useIndexes = current
        compiler.rowProbes = true
        compiler.statementBind = bind
        compiler.aliasPrefix = "r"
        return try compiler.compileClauses(rule.clauses, root: .path(base: document, steps: []))
    }
}
