import Foundation

/// One write of a batch (``RoostClient/batch(_:)``): a create, replace,
/// patch or delete, with its precondition.
public struct BatchOperation: Sendable, Hashable {
    let method: String
    let path: String
    let body: JSONValue?
    let headers: [String: String]

    /// `POST /collection`: a new document (a server-made id unless `document` has `_id`).
    public static func create(_ collection: String, _ document: JSONValue) -> BatchOperation {
        BatchOperation(method: "POST", path: "/" + RoostClient.escapeSegment(collection), body: document, headers: [:])
    }

    /// `POST /collection` of an `Encodable` model.
    public static func create<Model: Encodable>(_ collection: String, _ value: Model) throws -> BatchOperation {
        create(collection, try JSONValue(encoding: value))
    }

    /// `PUT /collection/id`: replace (or create) it, under `condition`.
    public static func put(_ collection: String, _ id: String, _ document: JSONValue, condition: WriteCondition = .always) -> BatchOperation {
        BatchOperation(method: "PUT", path: path(collection, id), body: document, headers: condition.headers)
    }

    /// `PATCH /collection/id` with a JSON Merge Patch, under `condition`.
    public static func patch(_ collection: String, _ id: String, _ patch: JSONValue, condition: WriteCondition = .always) -> BatchOperation {
        BatchOperation(method: "PATCH", path: path(collection, id), body: patch, headers: condition.headers)
    }

    /// `DELETE /collection/id`, under `condition`.
    public static func delete(_ collection: String, _ id: String, condition: WriteCondition = .always) -> BatchOperation {
        BatchOperation(method: "DELETE", path: path(collection, id), body: nil, headers: condition.headers)
    }

    private static func path(_ collection: String, _ id: String) -> String {
        "/" + RoostClient.escapeSegment(collection) + "/" + RoostClient.escapeSegment(id)
    }

    var json: JSONValue {
        var o: [String: JSONValue] = ["method": .string(method), "path": .string(path)]
        if let body { o["body"] = body }
        if !headers.isEmpty { o["headers"] = .object(headers.mapValues { .string($0) }) }
        return .object(o)
    }
}

/// What one operation of a batch answered.
public struct BatchResult: Sendable, Hashable {
    /// Its status (201 created, 200 replaced, patched or deleted).
    public let status: Int
    /// Its body: the entity written, or `{"count": 1}` for a delete.
    public let body: JSONValue

    /// The body as an entity of `Model`.
    public func entity<Model: Codable & Sendable>(as type: Model.Type = Model.self) throws -> Entity<Model> {
        try body.decode(as: Entity<Model>.self)
    }
}

extension RoostClient {
    /// Applies up to 100 writes in order, all or nothing (`POST /_batch`).
    ///
    /// Each is checked with the rights, preconditions, rules and hooks it
    /// would have alone. When one fails nothing is applied and this throws
    /// its error, with ``ServerError/operation`` naming its index.
    ///
    /// ```swift
    /// let results = try await roost.batch([
    ///     .create("locations", ["_id": "tiergarten", "name": "Tiergarten"]),
    ///     .patch("locations", "tiergarten", ["details": "The city's largest park."]),
    /// ])
    /// ```
    public func batch(_ operations: [BatchOperation]) async throws -> [BatchResult] {
        let body: JSONValue = ["operations": .array(operations.map(\.json))]
        return try await call("POST", ["_batch"], body: Self.body(body)).decode(BatchResults.self).results
    }
}

struct BatchResults: Decodable {
    let results: [BatchResult]
}

extension BatchResult: Decodable {
    enum Key: String, CodingKey { case status, body }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        status = try c.decode(Int.self, forKey: .status)
        body = try c.decodeIfPresent(JSONValue.self, forKey: .body) ?? .null
    }
}
