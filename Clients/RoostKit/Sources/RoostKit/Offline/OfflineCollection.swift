import Foundation

/// A mirrored collection of `Model` documents: reads from the local copy,
/// writes to it at once and to the outbox (sent by ``OfflineStore/sync()``).
///
/// Local queries evaluate the filter on the device: equality and dotted
/// paths, `$eq $ne $gt $gte $lt $lte $in $nin $exists $regex $not $all $size
/// $elemMatch $and $or $nor`, `$geoWithin` with `$box` and `$nearSphere`;
/// others throw ``RoostError/localStore(_:)``. `resolve` is not applied locally.
///
/// ```swift
/// let notes = store.collection("notes", of: Note.self)
/// let draft = try await notes.create(Note(text: "offline"))    // id "<user id>:<uuid>"
/// var edited = draft; edited.value.text = "edited offline"
/// try await notes.save(edited)
/// let all = try await notes.find(Query().sorted(by: "_createdAt"))
/// ```
public struct OfflineCollection<Model: Codable & Sendable>: Sendable {
    let store: OfflineStore
    /// The collection's name.
    public let name: String

    /// The local documents matching `query`.
    public func find(_ query: Query = Query()) async throws -> [Entity<Model>] {
        try await store.find(name, query).map { try decode($0) }
    }

    /// The local copy of one document, or nil.
    public func get(_ id: String) async throws -> Entity<Model>? {
        try await store.document(name, id).map { try decode($0) }
    }

    /// Creates a document locally with a new id (`<user id>:<UUID>` when signed
    /// in) and queues its creation (sent as a create-only write).
    @discardableResult
    public func create(_ value: Model, id: String? = nil, acl: ACL? = nil) async throws -> Entity<Model> {
        let entity = Entity(id: id ?? store.newID(), value: value, acl: acl)
        let body = try entity.writeBody()
        try await store.write(name, entity.id, .create, body: body, newLocal: body)
        return try decode(body)
    }

    /// Replaces a document locally and queues the replacement, conditional on
    /// the version the local copy had.
    @discardableResult
    public func save(_ entity: Entity<Model>) async throws -> Entity<Model> {
        var local = try entity.writeBody()
        let current = try await store.document(name, entity.id)
        for key in ["_createdAt", "_updatedAt"] { local[key] = current?[key] }
        if current?["_acl"] != nil, entity.acl == nil { local["_acl"] = current?["_acl"] }
        try await store.write(name, entity.id, current == nil ? .create : .replace, body: entity.writeBody(), newLocal: local)
        return try decode(local)
    }

    /// Applies a JSON Merge Patch locally and queues it.
    @discardableResult
    public func patch(_ id: String, _ patch: JSONValue) async throws -> Entity<Model> {
        guard let current = try await store.document(name, id) else {
            throw RoostError.server(ServerError(status: 404, code: .notFound, message: "No local copy of \(name)/\(id)."))
        }
        let local = current.merging(patch: patch)
        try await store.write(name, id, .patch, body: patch, newLocal: local)
        return try decode(local)
    }

    /// Deletes a document locally and queues the delete.
    public func delete(_ id: String) async throws {
        try await store.write(name, id, .delete, body: nil, newLocal: nil)
    }

    private func decode(_ value: JSONValue) throws -> Entity<Model> {
        do { return try value.decode(as: Entity<Model>.self) } catch {
            throw RoostError.invalidResponse("local \(name) document is not a \(Model.self): \(error)")
        }
    }
}
