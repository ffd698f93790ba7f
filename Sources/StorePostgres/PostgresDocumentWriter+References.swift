import Schema
import JSON
import Store

/// The `_refs` side table on PostgreSQL, kept as `DocumentWriter+References`
/// keeps SQLite's: one row per reference a declared field holds, moved in the
/// transaction of the write that changes the field.
///
/// Across nodes the database decides: a write that sets a reference reads its
/// target `FOR KEY SHARE`, so a delete of the target on another node either
/// waits for that write to commit (and then finds its `_refs` row: 409) or
/// has committed first (and the write finds no target: 400). No reference
/// is left dangling by two nodes racing.
extension PostgresDocumentWriter {
    /// Moves the `_refs` rows of entity `id` from `old` to `new` (nil: no
    /// entity); the rules are `ReferenceSchema.moveEntries`'.
    func updateReferenceEntries(_ collection: String, id: String, from old: JSONObject?, to new: JSONObject?,
                                scope: AccessScope) throws {
        try references.moveEntries(of: collection, from: old, to: new, isVisible: { field, target in
            try referenceTargetVisible(field.target, id: target, as: scope)
        }, remove: { field, target in
            try db.run("DELETE FROM _refs WHERE to_coll = $1::text AND to_id = $2::text AND from_coll = $3::text AND field = $4::text AND from_id = $5::text",
                       [.text(field.target), .text(target), .text(collection), .text(field.field), .text(id)])
        }, add: { field, target in
            try insertReference(to: field.target, target, from: collection, field: field.field, id)
        })
    }

    func insertReference(to collection: String, _ target: String, from: String, field: String, _ id: String) throws {
        try db.run("INSERT INTO _refs (to_coll, to_id, from_coll, field, from_id) VALUES ($1::text, $2::text, $3::text, $4::text, $5::text) ON CONFLICT DO NOTHING",
                   [.text(collection), .text(target), .text(from), .text(field), .text(id)])
    }

    /// Whether `id` exists in `collection` and `principal` may read it; the
    /// row stays key-share locked to the end of the transaction.
    func referenceTargetVisible(_ collection: String, id: String, as writer: AccessScope) throws -> Bool {
        let scope = references.scope(writer.principal, writer.roles, collection)
        guard (try? scope.checkCollectionRead()) != nil, let layout = try catalog.layout(collection) else { return false }
        let params = ParameterList([.text(id)])
        let visible = PostgresAccess.sql(scope.readRule, params.bind) ?? "TRUE"
        let seen: Bool?? = try db.first("SELECT \(visible) FROM \(layout.table) AS d WHERE d.id = $1::text FOR KEY SHARE", params.values) { $0.bool(0) }
        return (seen ?? nil) ?? false
    }

    /// How many references point at `id` in `collection`, by referencing collection and field.
    public func referrerCounts(to collection: String, id: String) throws -> [(collection: String, field: String, count: Int)] {
        guard !references.isEmpty else { return [] }
        return try db.query("SELECT from_coll, field, count(*) FROM _refs WHERE to_coll = $1::text AND to_id = $2::text GROUP BY from_coll, field ORDER BY from_coll, field",
                            [.text(collection), .text(id)]) { ($0.text(0) ?? "", $0.text(1) ?? "", Int($0.int(2) ?? 0)) }
    }

    /// The ids of the entities of `from` whose `field` references `id` in `collection`.
    public func referrers(to collection: String, id: String, from: String, field: String) throws -> [String] {
        try db.query("SELECT from_id FROM _refs WHERE to_coll = $1::text AND to_id = $2::text AND from_coll = $3::text AND field = $4::text ORDER BY from_id",
                     [.text(collection), .text(id), .text(from), .text(field)]) { $0.text(0) ?? "" }
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

    /// PostgreSQL keeps no read-rule stamps: its reads judge each row by the whole rule.
    public func useSchemas(_ schemas: @escaping @Sendable (String) -> JSONSchema?) { self.schemas = schemas }

    public func useDeclaredGeoPaths(_ paths: @escaping @Sendable (String) -> [String]) { declaredGeoPaths = paths }
    public func useRuleStamps(_ stamps: @escaping @Sendable (String) -> RuleStamp?) {}
    public func restampRows(limit: Int) throws -> Bool { false }

    /// Whether `collection`'s table exists.
    public func collectionExists(_ collection: String) throws -> Bool { try catalog.layout(collection) != nil }

    /// Makes `_refs` hold exactly the references of `schema`'s fields: drops
    /// the rows of fields no longer declared, fills those of newly declared
    /// ones from every stored document. Runs at start-up, one node at a time
    /// (an advisory lock): nodes starting together do the work once.
    public func applyReferences(_ schema: ReferenceSchema) throws {
        try transaction {
            try db.run("SELECT pg_advisory_xact_lock($1::bigint)", [.int(Self.referencesLockKey)])
            let recorded = try db.query("SELECT from_coll, field, to_coll FROM _ref_fields") { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2) ?? "") }
            let declared = Set(schema.all.map { "\($0.collection)\u{0}\($0.field)\u{0}\($0.target)" })
            for (from, field, to) in recorded where !declared.contains("\(from)\u{0}\(field)\u{0}\(to)") {
                try db.run("DELETE FROM _refs WHERE from_coll = $1::text AND field = $2::text", [.text(from), .text(field)])
                try db.run("DELETE FROM _ref_fields WHERE from_coll = $1::text AND field = $2::text", [.text(from), .text(field)])
                logger.info("dropped reference field", metadata: ["collection": "\(from)", "field": "\(field)"])
            }
            let known = Set(recorded.map { "\($0.0)\u{0}\($0.1)\u{0}\($0.2)" })
            for field in schema.all where !known.contains("\(field.collection)\u{0}\(field.field)\u{0}\(field.target)") {
                try db.run("INSERT INTO _ref_fields (from_coll, field, to_coll) VALUES ($1::text, $2::text, $3::text)",
                           [.text(field.collection), .text(field.field), .text(field.target)])
                let rows = try PostgresReferenceReport.stored(field, db: db, catalog: catalog)
                for (from, target) in rows { try insertReference(to: field.target, target, from: field.collection, field: field.field, from) }
                logger.info("indexed reference field", metadata: ["collection": "\(field.collection)", "field": "\(field.field)",
                                                                  "target": "\(field.target)", "references": "\(rows.count)"])
            }
        }
        references = schema
    }

    /// The advisory-lock key `applyReferences` holds ("Roost" + 4).
    static let referencesLockKey: Int64 = 0x526F_6F73_7404

    /// The dangling references of `references`' declared fields.
    public func danglingReferences() throws -> [DanglingReference] {
        try PostgresReferenceReport.dangling(references, db: db, catalog: catalog)
    }
}
