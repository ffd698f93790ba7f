import JSON
import Store

/// Dangling references on PostgreSQL, found as `ReferenceReport` finds them
/// on SQLite: through `_refs` for fields it was built for, by reading every
/// document for fields declared since. Sorted the same way.
enum PostgresReferenceReport {
    static func dangling(_ schema: ReferenceSchema, db: PGConnection, catalog: PostgresCatalog) throws -> [DanglingReference] {
        let recorded = Set(try db.query("SELECT from_coll, field, to_coll FROM _ref_fields") {
            "\($0.text(0) ?? "")\u{0}\($0.text(1) ?? "")\u{0}\($0.text(2) ?? "")"
        })
        var found: [DanglingReference] = []
        for field in schema.all {
            let target = try catalog.layout(field.target)
            let pairs: [(String, String)]
            if recorded.contains("\(field.collection)\u{0}\(field.field)\u{0}\(field.target)") {
                let missing = target.map { "AND NOT EXISTS (SELECT 1 FROM \($0.table) WHERE id = r.to_id)" } ?? ""
                pairs = try db.query("SELECT from_id, to_id FROM _refs AS r WHERE to_coll = $1::text AND from_coll = $2::text AND field = $3::text \(missing) ORDER BY from_id, to_id",
                                     [.text(field.target), .text(field.collection), .text(field.field)]) { ($0.text(0) ?? "", $0.text(1) ?? "") }
            } else {
                pairs = try stored(field, db: db, catalog: catalog).filter { _, to in
                    guard let target else { return true }
                    return try db.first("SELECT 1 FROM \(target.table) WHERE id = $1::text", [.text(to)]) { _ in () } == nil
                }
            }
            found += pairs.map { DanglingReference(collection: field.collection, id: $0.0, field: field.field, target: field.target, targetID: $0.1) }
        }
        return found.sorted { ($0.collection, $0.id, $0.field, $0.targetID) < ($1.collection, $1.id, $1.field, $1.targetID) }
    }

    /// Every (referencing id, target id) `field` holds in the stored documents.
    static func stored(_ field: ReferenceSchema.Field, db: PGConnection, catalog: PostgresCatalog) throws -> [(String, String)] {
        guard let layout = try catalog.layout(field.collection) else { return [] }
        let docs = try db.query("SELECT id, doc::text FROM \(layout.table) ORDER BY rid") { ($0.text(0) ?? "", $0.text(1) ?? "{}") }
        return try docs.flatMap { id, text -> [(String, String)] in
            guard case .object(let document) = try JSONParser.parse(text) else { return [] }
            return try ReferenceSchema.targets(of: document[field.field], field, strict: false).sorted().map { (id, $0) }
        }
    }
}

extension PostgresDocumentReader {
    /// The dangling references of `schema`'s fields (`roostd check-references`), from one snapshot.
    public func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference] {
        try snapshot { try PostgresReferenceReport.dangling(schema, db: db, catalog: catalog) }
    }
}
