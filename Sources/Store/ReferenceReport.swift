import JSON

/// A reference in a declared field whose target does not exist: data
/// stored before the declaration, reported rather than refused at start-up.
public struct DanglingReference: Sendable, Equatable {
    public let collection: String
    public let id: String
    public let field: String
    public let target: String
    public let targetID: String

    public init(collection: String, id: String, field: String, target: String, targetID: String) {
        self.collection = collection
        self.id = id
        self.field = field
        self.target = target
        self.targetID = targetID
    }

    /// The dangling references of `schema`'s fields, said once for both
    /// engines: through `_refs` for fields it was built for (`recorded`,
    /// keyed `collection NUL field NUL target`), by reading every document
    /// for fields declared since; sorted by collection, id, field, target id.
    /// - Parameters:
    ///   - layout: the engine's layout of a collection (nil: never written to).
    ///   - indexed: (referencing id, target id) pairs of a recorded field whose target is missing, given the target's layout.
    ///   - stored: every (referencing id, target id) pair a field holds in the stored documents.
    ///   - exists: whether the target id has a row in the target's layout.
    public static func find<Layout>(_ schema: ReferenceSchema, recorded: Set<String>,
                                    layout: (String) throws -> Layout?,
                                    indexed: (ReferenceSchema.Field, Layout?) throws -> [(String, String)],
                                    stored: (ReferenceSchema.Field) throws -> [(String, String)],
                                    exists: (Layout, String) throws -> Bool) throws -> [DanglingReference] {
        var found: [DanglingReference] = []
        for field in schema.all {
            let target = try layout(field.target)
            let pairs: [(String, String)]
            if recorded.contains("\(field.collection)\u{0}\(field.field)\u{0}\(field.target)") {
                pairs = try indexed(field, target)
            } else {
                pairs = try stored(field).filter { _, to in
                    guard let target else { return true }
                    return try !exists(target, to)
                }
            }
            found += pairs.map { DanglingReference(collection: field.collection, id: $0.0, field: field.field, target: field.target, targetID: $0.1) }
        }
        return found.sorted { ($0.collection, $0.id, $0.field, $0.targetID) < ($1.collection, $1.id, $1.field, $1.targetID) }
    }
}

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
