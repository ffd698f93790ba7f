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

    /// The local documents matching `query`. A document that does not decode
    /// as `Model` (written by another version of the app, say) is left out;
    /// ``findReportingFailures(_:)`` names them.
    public func find(_ query: Query = Query()) async throws -> [Entity<Model>] {
        try await findReportingFailures(query).entities
    }

    /// The local documents matching `query`, and those among them that do not
    /// decode as `Model`, each with its error: one bad document fails only itself.
    public func findReportingFailures(_ query: Query = Query()) async throws -> LocalResults<Model> {
        let (documents, pending) = try await store.findWithPending(name, query)
        return decode(documents, pending: pending)
    }

    /// Local documents decoded one by one: those that fail are listed, not thrown.
    func decode(_ documents: [JSONValue], pending: Set<String>) -> LocalResults<Model> {
        var results = LocalResults<Model>()
        results.pendingIDs = pending
        for document in documents {
            do { results.entities.append(try decode(document)) } catch {
                results.failures.append(.init(id: document["_id"]?.stringValue ?? "", error: error as? RoostError ?? .invalidResponse("\(error)")))
            }
        }
        return results
    }

    /// The local copy of one document, or nil; throws when it does not decode as `Model`.
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
        try decode(try await store.patch(name, id, patch))
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

/// What ``OfflineCollection/findReportingFailures(_:)`` found.
public struct LocalResults<Model: Codable & Sendable>: Sendable {
    /// The documents that decoded, in the query's order.
    public var entities: [Entity<Model>] = []
    /// The documents that did not, by id.
    public var failures: [Failure] = []
    /// The ids (of the whole collection) with local writes not yet sent to the server.
    public var pendingIDs: Set<String> = []

    /// Whether `id`'s local copy holds writes the server has not taken yet.
    public func hasPendingWrites(_ id: String) -> Bool { pendingIDs.contains(id) }

    /// A local document that does not decode as `Model`.
    public struct Failure: Sendable, Equatable {
        public let id: String
        public let error: RoostError
    }
}
