import JSON
import Store

/// Dangling references on PostgreSQL: `DanglingReference.find`'s walk (as
/// `ReferenceReport` on SQLite) over this engine's SQL.
enum PostgresReferenceReport {
    static func dangling(_ schema: ReferenceSchema, db: PGConnection, catalog: PostgresCatalog) throws -> [DanglingReference] {
        let recorded = Set(try db.query("SELECT from_coll, field, to_coll FROM _ref_fields") {
            "\($0.text(0) ?? "")\u{0}\($0.text(1) ?? "")\u{0}\($0.text(2) ?? "")"
        })
        return try DanglingReference.find(schema, recorded: recorded, layout: { try catalog.layout($0) }, indexed: { field, target in
            let missing = target.map { "AND NOT EXISTS (SELECT 1 FROM \($0.table) WHERE id = r.to_id)" } ?? ""
            return try db.query("SELECT from_id, to_id FROM _refs AS r WHERE to_coll = $1::text AND from_coll = $2::text AND field = $3::text \(missing) ORDER BY from_id, to_id",
                                [.text(field.target), .text(field.collection), .text(field.field)]) { ($0.text(0) ?? "", $0.text(1) ?? "") }
        }, stored: { try stored($0, db: db, catalog: catalog) }, exists: { target, to in
            try db.first("SELECT 1 FROM \(target.table) WHERE id = $1::text", [.text(to)]) { _ in () } != nil
        })
    }

    /// Every (referencing id, target id) `field` holds in the stored documents.
    static func stored(_ field: ReferenceSchema.Field, db: PGConnection, catalog: PostgresCatalog) throws -> [(String, String)] {
        guard let layout = try catalog.layout(field.collection) else { return [] }
        let docs = try db.query("SELECT id, doc::text FROM \(layout.table) ORDER BY rid") { (id: $0.text(0) ?? "", text: $0.text(1) ?? "{}") }
        return try ReferenceSchema.storedPairs(field, in: docs)
    }
}

extension PostgresDocumentReader {
    /// The dangling references of `schema`'s fields (`roostd check-references`), from one snapshot.
    public func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference] {
        try snapshot { try PostgresReferenceReport.dangling(schema, db: db, catalog: catalog) }
    }
}
