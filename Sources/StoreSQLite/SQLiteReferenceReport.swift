import JSON
import Store

/// Finds dangling references: through `_refs` for fields it was built for,
/// by reading every document for fields declared since (a config checked
/// before the daemon applied it).
enum ReferenceReport {
    static func dangling(_ schema: ReferenceSchema, db: SQLiteConnection, catalog: Catalog) throws -> [DanglingReference] {
        let hasTable = try db.prepare("SELECT count(*) FROM sqlite_master WHERE name = '_ref_fields'").firstRow { $0.int(0) } ?? 0 > 0
        let recorded = hasTable
            ? Set(try db.prepare("SELECT from_coll, field, to_coll FROM _ref_fields").rows { "\($0.text(0))\u{0}\($0.text(1))\u{0}\($0.text(2))" })
            : []
        return try DanglingReference.find(schema, recorded: recorded, layout: { try catalog.layout($0) }, indexed: { field, target in
            let missing = target.map { "AND NOT EXISTS (SELECT 1 FROM \($0.table) WHERE id = r.to_id)" } ?? ""
            return try db.prepare("SELECT from_id, to_id FROM _refs AS r WHERE to_coll = ?1 AND from_coll = ?2 AND field = ?3 \(missing) ORDER BY from_id, to_id")
                .rows([.text(field.target), .text(field.collection), .text(field.field)]) { ($0.text(0), $0.text(1)) }
        }, stored: { try stored($0, db: db, catalog: catalog) }, exists: { target, to in
            try db.prepare("SELECT 1 FROM \(target.table) WHERE id = ?1").firstRow([.text(to)]) { $0.int(0) } != nil
        })
    }

    /// Every (referencing id, target id) `field` holds in the stored documents.
    static func stored(_ field: ReferenceSchema.Field, db: SQLiteConnection, catalog: Catalog) throws -> [(String, String)] {
        guard let layout = try catalog.layout(field.collection) else { return [] }
        let docs = try db.prepare("SELECT id, doc FROM \(layout.table)").rows { (id: $0.text(0), text: $0.text(1)) }
        return try ReferenceSchema.storedPairs(field, in: docs)
    }
}

extension DocumentWriter {
    /// The dangling references of `references`' declared fields.
    public func danglingReferences() throws -> [DanglingReference] {
        try ReferenceReport.dangling(references, db: db, catalog: catalog)
    }
}

extension DocumentReader {
    /// The dangling references of `schema`'s fields (`roostd check-references`).
    public func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference] {
        try db.readTransaction { try ReferenceReport.dangling(schema, db: db, catalog: catalog) }
    }
}
