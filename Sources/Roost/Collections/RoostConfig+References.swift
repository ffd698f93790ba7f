import Store

extension RoostConfig {
    /// Every reference field the collections declare, as the writer keeps them.
    /// - Parameter scope: a caller's scope in a collection (reloadable level and rules).
    /// - Parameter collections: every collection's settings (the config's and those set up at run time); nil: the config's.
    func referenceSchema(collections: [String: Collection]? = nil,
                         scope: @escaping @Sendable (AccessScope.Principal, [String], String) -> AccessScope) -> ReferenceSchema {
        ReferenceSchema((collections ?? self.collections).values.flatMap(\.references).sorted { ($0.collection, $0.field) < ($1.collection, $1.field) },
                        maxCascade: referencesMaxCascade, scope: scope)
    }

    /// Parses `collections.<name>.references`:
    /// `{field: {collection: <target>, on_delete: restrict|cascade|nullify}}`.
    /// A target is a collection or `users` (the member directory); files are not.
    static func references(_ name: String, _ value: Any) throws -> [ReferenceSchema.Field] {
        let path = "collections.\(name).references"
        guard let map = value as? [String: Any] else { throw Invalid("\(path) must be a mapping of field names") }
        return try map.keys.sorted().map { field in
            guard Self.isFieldName(field) else {
                throw Invalid("\(path).\(field): a reference field is a top-level field name (no '.', '$' or leading '_')")
            }
            guard let spec = map[field] as? [String: Any] else { throw Invalid("\(path).\(field) must be a mapping") }
            for key in spec.keys where key != "collection" && key != "on_delete" {
                throw Invalid("\(path).\(field): unknown setting \"\(key)\" (use collection and on_delete)")
            }
            guard let target = spec["collection"].map({ "\($0)" }),
                  CollectionName.isValid(target) || target == AccessPolicy.usersCollection else {
                throw Invalid("\(path).\(field).collection must name a collection or users (files cannot be referenced)")
            }
            let mode = spec["on_delete"].map { "\($0)" } ?? ReferenceSchema.OnDelete.restrict.rawValue
            guard let onDelete = ReferenceSchema.OnDelete(rawValue: mode) else {
                throw Invalid("\(path).\(field).on_delete must be restrict, cascade or nullify")
            }
            return ReferenceSchema.Field(collection: name, field: field, target: target, onDelete: onDelete)
        }
    }

    /// A top-level field name a reference may live in.
    static func isFieldName(_ field: String) -> Bool {
        !field.isEmpty && field.utf8.count <= 256 && !field.hasPrefix("_") && !field.hasPrefix("$") && !field.contains(".")
    }
}
