import Store

/// An `AccessScope`'s rules as SQLite SQL over the JSON text of a row's
/// document (`PostgresAccess` renders them for PostgreSQL).
extension AccessScope {
    /// `rule` as SQLite SQL over the JSON text `document` (the row `d`'s
    /// by default), or nil for every row. A read rule's filter is rendered
    /// by `FilterCompiler.ruleSQL`, from the same tree the in-memory
    /// matcher evaluates.
    static func sqlite(_ rule: RowRule, document: String = "d.doc", layout: CollectionLayout? = nil,
                       _ bind: (SQLValue) -> String) -> String? {
        switch rule {
        case .all: return nil
        case .none: return "0"
        case .listed(let id, let principals, let fields): return listed(id, principals, in: fields, document: document, bind)
        case .matching(let rule):
            // A rule that cannot be rendered (checked at start-up, so never expected) shows nothing.
            let key = "sqlite\u{0}\(document)\u{0}" + (layout.map { $0.indexTable + ":" + $0.indexedPaths.sorted().joined(separator: ",") } ?? "")
            return (try? rule.sql(key: key, bind: bind) { record in
                try withoutActuallyEscaping(record) { record in
                    let whole = try FilterCompiler.ruleSQL(rule.filter, dialect: SQLiteDialect(), document: document, layout: layout, bind: record)
                    // A collection's own rows carry stamps; a feed state or a bound document does not.
                    guard let stamped = rule.stamped, layout != nil, document == "d.doc" else { return whole }
                    // Each side in a WHEN, where SQLite stops an OR at its first true term.
                    return "CASE WHEN d.rs = \(record(.int(stamped.fingerprint))) THEN CASE WHEN \(try stampedSQL(stamped, layout: layout, record)) THEN 1 ELSE 0 END "
                        + "ELSE CASE WHEN \(whole) THEN 1 ELSE 0 END END"
                }
            }) ?? "0"
        }
    }

    /// A stamped rule over the row `d`'s bits (`rb`): for some branch, one
    /// of its bits is set and its rest holds.
    private static func stampedSQL(_ stamped: StampedRule, layout: CollectionLayout?, _ bind: (SQLValue) -> String) throws -> String {
        guard !stamped.branches.isEmpty else { return "0" }
        let terms = try stamped.branches.map { branch in
            let bit = "(d.rb & \(branch.mask)) <> 0"
            guard let rest = branch.rest else { return bit }
            let restSQL = try withoutActuallyEscaping(bind) { bind in
                try FilterCompiler.ruleSQL(rest, dialect: SQLiteDialect(), document: "d.doc", layout: layout, bind: bind)
            }
            return "(\(bit) AND (\(restSQL)))"
        }
        return "(" + terms.joined(separator: " OR ") + ")"
    }

    /// SQL that limits reads to visible rows, or nil when every row is visible.
    /// With the rows' `layout`, a read rule tests indexed fields through the
    /// index (`FilterCompiler.rowProbes`) instead of reading each document.
    func readPredicate(_ bind: (SQLValue) -> String, layout: CollectionLayout? = nil) -> String? {
        Self.sqlite(readRule, layout: layout, bind)
    }

    /// `readPredicate` over a stored state of an entity, the JSON text
    /// `document` (a feed row's `prev_doc`): whether the caller could read it
    /// in that state. NULL (no state: before a create) is not readable.
    func readPredicate(state document: String, _ bind: (SQLValue) -> String) -> String? {
        Self.sqlite(readRule, document: document, bind)
    }

    /// A condition that starts a private read from the rows that name the
    /// caller or their roles (an index range of `aclTable` that touches no
    /// one else's), or nil when the read is not an `_acl` listing. It
    /// narrows; `readPredicate` still guards.
    func visibleRows(_ layout: CollectionLayout, _ bind: (SQLValue) -> String) -> String? {
        guard case .listed(_, let principals, _) = readRule else { return nil }
        let names = principals.map { bind(.text($0)) }.joined(separator: ", ")
        return "d.rid IN (SELECT rid FROM \(layout.aclTable) WHERE uid IN (\(names)))"
    }

    /// SQL that limits writes to rows this caller may change, or nil for all rows.
    func writePredicate(_ bind: (SQLValue) -> String) -> String? { Self.sqlite(writeRule, bind) }

    /// True when `id` is the row's creator or one of `principals` appears
    /// in one of its ACL lists.
    static func listed(_ id: String, _ principals: [String], in fields: [String], document: String = "d.doc",
                       _ bind: (SQLValue) -> String) -> String {
        let user = bind(.text(id))
        let names = principals == [id] ? user : principals.map { bind(.text($0)) }.joined(separator: ", ")
        let terms = fields.map { field in
            field == "creator"
                ? "json_extract(\(document), '$._acl.creator') = \(user)"
                : "EXISTS (SELECT 1 FROM json_each(\(document), '$._acl.\(field)') WHERE value IN (\(names)))"
        }
        return "(" + terms.joined(separator: " OR ") + ")"
    }
}
