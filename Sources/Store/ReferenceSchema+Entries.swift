import JSON

/// How a write moves its `_refs` rows, said once for both engines; each
/// engine runs its own SQL in the closures.
extension ReferenceSchema {
    /// Moves the `_refs` rows of an entity of `collection` from `old` to
    /// `new` (nil: no entity). A reference newly set must have the declared
    /// shape and point at an entity the writer may read (`isVisible`): one it
    /// may not read is refused exactly like a missing one, so the 400 reveals
    /// no more than a GET. New targets are checked in sorted order, so the
    /// 400 names the same missing target on every run and engine.
    /// - Parameters:
    ///   - isVisible: whether target id exists in the field's target collection and the writer may read it.
    ///   - remove: drops the row of (field, target id).
    ///   - add: inserts the row of (field, target id).
    public func moveEntries(of collection: String, from old: JSONObject?, to new: JSONObject?,
                            isVisible: (Field, String) throws -> Bool,
                            remove: (Field, String) throws -> Void,
                            add: (Field, String) throws -> Void) throws {
        guard let fields = byCollection[collection] else { return }
        for field in fields {
            let before = old?[field.field], after = new?[field.field]
            if before == after { continue }
            let had = try Self.targets(of: before, field, strict: false)
            let has = try Self.targets(of: after, field, strict: true)
            for target in had.subtracting(has) { try remove(field, target) }
            for target in has.subtracting(had).sorted() {
                guard try isVisible(field, target) else {
                    throw StoreError.invalid("\(field.field): no document with _id \"\(target)\" in \(field.target).")
                }
                try add(field, target)
            }
        }
    }

    /// Every (referencing id, target id) `field` holds in `documents` (id,
    /// JSON text), each document's targets sorted: what fills `_refs` for a
    /// newly declared field and what the dangling report reads.
    public static func storedPairs(_ field: Field, in documents: [(id: String, text: String)]) throws -> [(String, String)] {
        try documents.flatMap { id, text -> [(String, String)] in
            guard case .object(let document) = try JSONParser.parse(text) else { return [] }
            return try targets(of: document[field.field], field, strict: false).sorted().map { (id, $0) }
        }
    }
}
