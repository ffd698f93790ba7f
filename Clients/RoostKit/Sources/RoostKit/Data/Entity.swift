import Foundation

/// A stored document: your `Model` plus what the server keeps beside it
/// (`_id`, `_createdAt`, `_updatedAt`, `_acl`).
///
/// The JSON is one flat object; `Model` decodes from it as if the server's
/// fields were not there, so models need no `_id` property of their own.
///
/// ```swift
/// struct Location: Codable, Sendable { var name: String; var location: [Double] }
/// let saved: Entity<Location> = try await locations.create(Location(name: "Park", location: [-122.48, 37.77]))
/// print(saved.id, saved.value.name, saved.etag ?? "")
/// ```
public struct Entity<Model: Codable & Sendable>: Codable, Sendable, Identifiable {
    /// The document's id.
    public let id: String
    /// When it was created (ISO 8601 UTC with milliseconds), as the server wrote it.
    public let createdAt: String?
    /// When it last changed, as the server wrote it; this is the document's version.
    public let updatedAt: String?
    /// Who may read and write it.
    public var acl: ACL?
    /// The document's own fields.
    public var value: Model

    /// A new (unsaved) entity: `id` nil lets the server or the offline store choose one.
    public init(id: String, value: Model, acl: ACL? = nil) {
        self.id = id
        self.value = value
        self.acl = acl
        self.createdAt = nil
        self.updatedAt = nil
    }

    /// The strong `ETag` for conditional writes: `_updatedAt` in double quotes.
    public var etag: String? { updatedAt.map { "\"\($0)\"" } }

    enum Keys: String, CodingKey { case _id, _createdAt, _updatedAt, _acl }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        id = try c.decode(String.self, forKey: ._id)
        createdAt = try c.decodeIfPresent(String.self, forKey: ._createdAt)
        updatedAt = try c.decodeIfPresent(String.self, forKey: ._updatedAt)
        acl = try c.decodeIfPresent(ACL.self, forKey: ._acl)
        value = try Model(from: decoder)
    }

    public func encode(to encoder: Encoder) throws {
        var object = try JSONValue(encoding: value).objectValue ?? [:]
        object["_id"] = .string(id)
        if let createdAt { object["_createdAt"] = .string(createdAt) }
        if let updatedAt { object["_updatedAt"] = .string(updatedAt) }
        if let acl { object["_acl"] = try JSONValue(encoding: acl) }
        try object.encode(to: encoder)
    }

    /// The body a write sends: the model's fields, `_id` and `_acl` (never the timestamps).
    func writeBody() throws -> JSONValue {
        var object = try JSONValue(encoding: value).objectValue ?? [:]
        object["_createdAt"] = nil
        object["_updatedAt"] = nil
        object["_id"] = .string(id)
        if let acl { object["_acl"] = try JSONValue(encoding: acl) }
        return .object(object)
    }
}

/// A document's access list: its creator (set by the server) and who else may read and write.
public struct ACL: Codable, Sendable, Hashable {
    /// The user who created it (the server sets it; it never changes).
    public var creator: String?
    /// Users who may read it besides the creator.
    public var read: [String]?
    /// Users who may change it besides the creator.
    public var write: [String]?

    public init(creator: String? = nil, read: [String]? = nil, write: [String]? = nil) {
        self.creator = creator
        self.read = read
        self.write = write
    }
}

/// When a write may happen, in terms of the document's version (its `ETag`).
public enum WriteCondition: Sendable, Hashable {
    /// Always (no precondition header).
    case always
    /// Only if the document is still at this version (`If-Match`); else 412 `PreconditionFailed`.
    case unchanged(etag: String)
    /// Only if no document has this id (`If-None-Match: *`): create, never replace.
    case absent

    var headers: [String: String] {
        switch self {
        case .always: return [:]
        case .unchanged(let etag): return ["If-Match": etag]
        case .absent: return ["If-None-Match": "*"]
        }
    }
}
