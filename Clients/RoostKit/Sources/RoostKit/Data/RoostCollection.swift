import Foundation

/// A collection of `Model` documents on the server: typed CRUD and queries.
/// Every call is one HTTP request; see ``OfflineStore`` for reads and writes
/// that work without a network.
///
/// ```swift
/// let locations = roost.collection("locations", of: Location.self)
/// let near = try await locations.find(Query(Field("location").near(GeoPoint(-122.4, 37.7), maxDistance: 5000)))
/// ```
public struct RoostCollection<Model: Codable & Sendable>: Sendable {
    let client: RoostClient
    /// The collection's name.
    public let name: String

    /// The documents matching `query` (`GET /:collection`).
    public func find(_ query: Query = Query()) async throws -> [Entity<Model>] {
        try await client.call("GET", [name], query: query.parameters).decode([Entity<Model>].self)
    }

    /// How many documents match `filter` (`GET /:collection/_count`).
    public func count(_ filter: Filter? = nil) async throws -> Int {
        let q = Query(filter).parameters
        return try await client.call("GET", [name, "_count"], query: q).decode(CountReply.self).count
    }

    /// One document by id; throws ``ServerError/Code/notFound`` when there is none (or you may not read it).
    public func get(_ id: String, resolving resolve: [String] = []) async throws -> Entity<Model> {
        let q = resolve.isEmpty ? [] : [("resolve", resolve.joined(separator: ","))]
        return try await client.call("GET", [name, id], query: q).decode(Entity<Model>.self)
    }

    /// Creates a document (`POST /:collection`), with a server-made id unless
    /// `id` is given (in a private collection it must start with "<your id>:";
    /// an id that exists answers ``ServerError/Code/conflict``).
    public func create(_ value: Model, id: String? = nil, acl: ACL? = nil) async throws -> Entity<Model> {
        var body = try JSONValue(encoding: value).objectValue ?? [:]
        body["_createdAt"] = nil
        body["_updatedAt"] = nil
        if let id { body["_id"] = .string(id) }
        if let acl { body["_acl"] = try JSONValue(encoding: acl) }
        return try await client.call("POST", [name], body: RoostClient.body(JSONValue.object(body))).decode(Entity<Model>.self)
    }

    /// Replaces (or creates) the document `entity.id` (`PUT /:collection/:id`).
    ///
    /// - Parameter condition: ``WriteCondition/unchanged(etag:)`` (use
    ///   `entity.etag`) refuses to overwrite someone else's change with 412.
    @discardableResult
    public func save(_ entity: Entity<Model>, condition: WriteCondition = .always) async throws -> Entity<Model> {
        let body = try RoostClient.body(entity.writeBody())
        return try await client.call("PUT", [name, entity.id], headers: condition.headers, body: body).decode(Entity<Model>.self)
    }

    /// Applies a JSON Merge Patch (RFC 7396) (`PATCH /:collection/:id`): members
    /// set to `null` are removed, objects merge, everything else replaces.
    @discardableResult
    public func patch(_ id: String, _ patch: JSONValue, condition: WriteCondition = .always) async throws -> Entity<Model> {
        let body = try RoostClient.body(patch)
        return try await client.call("PATCH", [name, id], headers: condition.headers, body: body).decode(Entity<Model>.self)
    }

    /// Deletes a document (`DELETE /:collection/:id`).
    public func delete(_ id: String, condition: WriteCondition = .always) async throws {
        try await client.call("DELETE", [name, id], headers: condition.headers)
    }

    /// The same collection's documents as untyped JSON.
    public var untyped: RoostCollection<JSONValue> { RoostCollection<JSONValue>(client: client, name: name) }
}

/// `{"count": N}`.
struct CountReply: Decodable { let count: Int }
