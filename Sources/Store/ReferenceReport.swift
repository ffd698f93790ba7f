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
