import JSON

/// The reference fields the configuration declares: in which collection a
/// top-level field holds a reference (or an array of references) to which
/// collection, and what deleting the target does to the referencing entity.
///
/// A reference is `{"_type":"ref","_collection":"<target>","_id":"<id>"}`,
/// the shape `?resolve=` expands. The writer keeps one `_refs` row per
/// reference held in a declared field (`DocumentWriter+References`), so
/// "who references this entity?" is a primary-key range look-up.
public struct ReferenceSchema: Sendable {
    /// What deleting a referenced entity does to the entities that reference it.
    public enum OnDelete: String, Sendable, CaseIterable {
        /// The delete is refused (409 `Referenced`) while anything references the target.
        case restrict
        /// The referencing entities are deleted too, in the same transaction.
        case cascade
        /// The reference is removed: a single reference becomes null, an
        /// array loses the element.
        case nullify
    }

    /// One declared reference field.
    public struct Field: Sendable, Hashable {
        /// The referencing collection.
        public let collection: String
        /// Its top-level field that holds the reference(s).
        public let field: String
        /// The collection the references point into.
        public let target: String
        public let onDelete: OnDelete

        public init(collection: String, field: String, target: String, onDelete: OnDelete) {
            self.collection = collection
            self.field = field
            self.target = target
            self.onDelete = onDelete
        }
    }

    /// The declared fields by referencing collection.
    public let byCollection: [String: [Field]]
    /// Most entities one delete may cascade to or nullify (`references_max_cascade`).
    public let maxCascade: Int
    /// A caller's scope (principal, roles) in a collection, to decide
    /// whether a writer may see the target it names (a target it may not
    /// read is "missing"): its level and read rule, as for any read.
    public let scope: @Sendable (AccessScope.Principal, [String], String) -> AccessScope

    /// The default of `references_max_cascade`.
    public static let defaultMaxCascade = 1000

    public init(_ fields: [Field], maxCascade: Int = defaultMaxCascade,
                scope: @escaping @Sendable (AccessScope.Principal, [String], String) -> AccessScope = { p, _, _ in AccessScope(principal: p, level: .public) }) {
        byCollection = Dictionary(grouping: fields, by: \.collection)
        self.maxCascade = maxCascade
        self.scope = scope
    }

    /// No reference is declared: writes keep no `_refs` rows.
    public static let none = ReferenceSchema([])

    public var isEmpty: Bool { byCollection.isEmpty }

    /// Every declared field, in a stable order.
    public var all: [Field] {
        byCollection.values.flatMap { $0 }.sorted { ($0.collection, $0.field) < ($1.collection, $1.field) }
    }

    /// The declaration of `field` in `collection`, if any.
    public func field(_ collection: String, _ field: String) -> Field? {
        byCollection[collection]?.first { $0.field == field }
    }

    /// True when some declared field points into `collection`.
    public func isTarget(_ collection: String) -> Bool {
        byCollection.values.contains { $0.contains { $0.target == collection } }
    }

    /// The target ids `value` (a declared field's value) references.
    /// - Parameter strict: throw for a value of the wrong shape (a client's
    ///   write) instead of ignoring it (data stored before the declaration).
    public static func targets(of value: JSONValue?, _ field: Field, strict: Bool) throws -> Set<String> {
        func one(_ item: JSONValue) throws -> String? {
            if case .object(let o) = item, o["_type"] == .string("ref"), o["_collection"] == .string(field.target),
               case .string(let id)? = o["_id"], !id.isEmpty {
                return id
            }
            if strict { throw StoreError.invalid(shapeRule(field)) }
            return nil
        }
        switch value {
        case nil, .null?: return []
        case .array(let items)?: return Set(try items.compactMap(one))
        case let item?: return Set(try one(item).map { [$0] } ?? [])
        }
    }

    /// What a declared field may hold, as a sentence for a 400.
    static func shapeRule(_ field: Field) -> String {
        "\(field.field) must be a reference {\"_type\":\"ref\",\"_collection\":\"\(field.target)\",\"_id\":\"…\"}, an array of them, or null."
    }
}
