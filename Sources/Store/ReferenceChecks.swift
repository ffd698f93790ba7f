/// The last guard of every delete, said once for both engines: refuses one
/// that would leave a reference dangling (a `restrict`, or a path that did
/// not cascade), or defers the check to the end of a cascade. One per writer.
public final class ReferenceChecks {
    /// Deletes whose check waits for the end of the cascade running now (nil: none runs).
    private var deferred: [(collection: String, id: String)]?

    public init() {}

    /// Refuses (409) deleting `id` in `collection` while references point at
    /// it; inside `deferring`, notes it for the end of the cascade instead.
    /// - Parameter referrerCounts: the engine's count of references to (collection, id).
    public func check(_ collection: String, id: String, references: ReferenceSchema,
                      referrerCounts: (String, String) throws -> [(collection: String, field: String, count: Int)]) throws {
        guard references.isTarget(collection) else { return }
        if deferred != nil { deferred?.append((collection, id)); return }
        let count = try referrerCounts(collection, id).reduce(0) { $0 + $1.count }
        guard count == 0 else {
            throw StoreError.conflict("\"\(id)\" in \(collection) is still referenced by \(count) \(count == 1 ? "entity" : "entities").")
        }
    }

    /// Runs `body` (a cascade: its deletes and updates in any order, cycles
    /// included) and only then checks that nothing references an entity it
    /// deleted. Nested calls run inside the outer one's check.
    public func deferring<T>(_ body: () throws -> T, references: ReferenceSchema,
                             referrerCounts: (String, String) throws -> [(collection: String, field: String, count: Int)]) throws -> T {
        guard deferred == nil else { return try body() }
        deferred = []
        defer { deferred = nil }
        let result = try body()
        let deleted = deferred ?? []
        deferred = nil
        for (collection, id) in deleted {
            try check(collection, id: id, references: references, referrerCounts: referrerCounts)
        }
        return result
    }
}
