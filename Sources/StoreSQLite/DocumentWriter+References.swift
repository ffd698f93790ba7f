import JSON
import Store

/// The `_refs` side table: one row per reference a declared field holds,
/// `(to_coll, to_id, from_coll, field, from_id)`, its primary key in that
/// order, so "who references this entity?" (every delete of a target) is a
/// range look-up whether the field holds one reference or an array of them.
/// Rows are moved in the transaction of the write that changes the field,
/// by their full key recomputed from the old document (no second B-tree).
/// `_ref_fields` records the declarations the rows were built for.
enum ReferenceSQL {
    static let tables = """
        CREATE TABLE IF NOT EXISTS _refs (to_coll TEXT NOT NULL, to_id TEXT NOT NULL, from_coll TEXT NOT NULL,
                                          field TEXT NOT NULL, from_id TEXT NOT NULL,
                                          PRIMARY KEY (to_coll, to_id, from_coll, field, from_id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS _ref_fields (from_coll TEXT NOT NULL, field TEXT NOT NULL, to_coll TEXT NOT NULL,
                                                PRIMARY KEY (from_coll, field));
        """
    static let insert = "INSERT OR IGNORE INTO _refs (to_coll, to_id, from_coll, field, from_id) VALUES (?1, ?2, ?3, ?4, ?5)"
    static let delete = "DELETE FROM _refs WHERE to_coll = ?1 AND to_id = ?2 AND from_coll = ?3 AND field = ?4 AND from_id = ?5"
}

extension DocumentWriter {
    /// Moves the `_refs` rows of entity `id` from `old` to `new` (nil: no
    /// entity); the rules are `ReferenceSchema.moveEntries`'.
    func updateReferenceEntries(_ collection: String, id: String, from old: JSONObject?, to new: JSONObject?,
                                scope: AccessScope) throws {
        try references.moveEntries(of: collection, from: old, to: new, isVisible: { field, target in
            try referenceTargetVisible(field.target, id: target, as: scope)
        }, remove: { field, target in
            try db.prepare(ReferenceSQL.delete).run([.text(field.target), .text(target), .text(collection), .text(field.field), .text(id)])
        }, add: { field, target in
            try db.prepare(ReferenceSQL.insert).run([.text(field.target), .text(target), .text(collection), .text(field.field), .text(id)])
        })
    }

    /// Whether `id` exists in `collection` and the writer of `writer` may read it.
    func referenceTargetVisible(_ collection: String, id: String, as writer: AccessScope) throws -> Bool {
        let scope = references.scope(writer.principal, writer.roles, collection)
        guard (try? scope.checkCollectionRead()) != nil, let layout = try catalog.layout(collection) else { return false }
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind, layout: layout) ?? "1"
        return try db.prepare("SELECT \(visible) FROM \(layout.table) AS d WHERE d.id = ?1").firstRow(params) { $0.int(0) != 0 } ?? false
    }

    /// How many references point at `id` in `collection`, by referencing
    /// collection and field: one range read of `_refs`.
    public func referrerCounts(to collection: String, id: String) throws -> [(collection: String, field: String, count: Int)] {
        guard !references.isEmpty else { return [] }
        return try db.prepare("SELECT from_coll, field, count(*) FROM _refs WHERE to_coll = ?1 AND to_id = ?2 GROUP BY from_coll, field")
            .rows([.text(collection), .text(id)]) { ($0.text(0), $0.text(1), Int($0.int(2))) }
    }

    /// The ids of the entities of `from` whose `field` references `id` in `collection`.
    public func referrers(to collection: String, id: String, from: String, field: String) throws -> [String] {
        try db.prepare("SELECT from_id FROM _refs WHERE to_coll = ?1 AND to_id = ?2 AND from_coll = ?3 AND field = ?4")
            .rows([.text(collection), .text(id), .text(from), .text(field)]) { $0.text(0) }
    }

    /// The last guard of every delete (see `ReferenceChecks.check`).
    func checkNotReferenced(_ collection: String, id: String) throws {
        try referenceChecks.check(collection, id: id, references: references) { try referrerCounts(to: $0, id: $1) }
    }

    /// Runs `body` (a cascade) and only then checks that nothing references
    /// an entity it deleted (see `ReferenceChecks.deferring`).
    public func deferringReferenceChecks<T>(_ body: () throws -> T) throws -> T {
        try referenceChecks.deferring(body, references: references) { try referrerCounts(to: $0, id: $1) }
    }

    /// Whether `collection`'s table exists.
    public func collectionExists(_ collection: String) throws -> Bool { try catalog.layout(collection) != nil }

    /// Makes `_refs` hold exactly the references of `schema`'s fields:
    /// drops the rows of fields no longer declared, fills those of newly
    /// declared ones from every stored document. Runs at start-up, before serving,
    /// and as a writer job when a collection's references change while running.
    public func applyReferences(_ schema: ReferenceSchema) throws {
        let apply: () throws -> Void = { [self] in
            try db.exec(ReferenceSQL.tables)
            let recorded = try db.prepare("SELECT from_coll, field, to_coll FROM _ref_fields").rows { ($0.text(0), $0.text(1), $0.text(2)) }
            let declared = Set(schema.all.map { "\($0.collection)\u{0}\($0.field)\u{0}\($0.target)" })
            for (from, field, to) in recorded where !declared.contains("\(from)\u{0}\(field)\u{0}\(to)") {
                try db.prepare("DELETE FROM _refs WHERE from_coll = ?1 AND field = ?2").run([.text(from), .text(field)])
                try db.prepare("DELETE FROM _ref_fields WHERE from_coll = ?1 AND field = ?2").run([.text(from), .text(field)])
                logger.info("dropped reference field", metadata: ["collection": "\(from)", "field": "\(field)"])
            }
            let known = Set(recorded.map { "\($0.0)\u{0}\($0.1)\u{0}\($0.2)" })
            for field in schema.all where !known.contains("\(field.collection)\u{0}\(field.field)\u{0}\(field.target)") {
                try db.prepare("INSERT INTO _ref_fields (from_coll, field, to_coll) VALUES (?1, ?2, ?3)")
                    .run([.text(field.collection), .text(field.field), .text(field.target)])
                let rows = try ReferenceReport.stored(field, db: db, catalog: catalog)
                for (from, target) in rows {
                    try db.prepare(ReferenceSQL.insert).run([.text(field.target), .text(target), .text(field.collection), .text(field.field), .text(from)])
                }
                logger.info("indexed reference field", metadata: ["collection": "\(field.collection)", "field": "\(field.field)",
                                                                  "target": "\(field.target)", "references": "\(rows.count)"])
            }
        }
        // At start-up on its own; as a writer job (a change made while running)
        // inside the job's transaction, where BEGIN would fail.
        if db.inTransaction { try db.savepoint(apply) } else { try db.transaction(apply) }
        references = schema
    }
}
