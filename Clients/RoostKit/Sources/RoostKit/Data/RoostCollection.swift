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

    /// One page of the documents matching `query`, with the cursor of the next
    /// (the server's `X-Roost-Next`, nil on the last page). Pass it to
    /// ``Query/after(_:)`` with the same filter and sort:
    ///
    /// ```swift
    /// var query = Query().sorted(by: "name").limit(100)
    /// repeat {
    ///     let page = try await places.page(query)
    ///     show(page.entities)
    ///     query = query.after(page.next)
    /// } while query.after != nil
    /// ```
    public func page(_ query: Query) async throws -> Page<Model> {
        let reply = try await client.call("GET", [name], query: query.parameters)
        return Page(entities: try reply.decode([Entity<Model>].self), next: reply.header("X-Roost-Next"))
    }

    /// Every document matching `query`, page by page with keyset cursors (``page(_:)``), as they arrive.
    public func all(_ query: Query = Query()) -> AsyncThrowingStream<Entity<Model>, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var q = query
                    repeat {
                        let page = try await self.page(q)
                        for entity in page.entities { continuation.yield(entity) }
                        q = q.after(page.next)
                    } while q.after != nil && !Task.isCancelled
                    continuation.finish()
                } catch { continuation.finish(throwing: error) }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
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

/// One page of a list and the cursor of the next.
public struct Page<Model: Codable & Sendable>: Sendable {
    /// The page's documents.
    public let entities: [Entity<Model>]
    /// The next page's cursor (``Query/after(_:)``), nil when this is the last page.
    public let next: String?
}

/// `{"count": N}`.
struct CountReply: Decodable { let count: Int }
