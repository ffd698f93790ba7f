import JSON

/// A collection as the admin console lists it.
public struct CollectionDetail: Sendable {
    public let name: String
    public let count: Int
    /// `(path, kind)` pairs, kind `value` or `geo`.
    public let indexes: [(path: String, kind: String)]

    public init(name: String, count: Int, indexes: [(path: String, kind: String)]) {
        self.name = name
        self.count = count
        self.indexes = indexes
    }
}

/// A live session as the admin console lists it. `id` is the first 16 hex
/// digits of the token's hash: enough to name it, useless to sign in with.
public struct SessionSummary: Sendable {
    public let id: String
    public let createdAt: Int64
    public let lastSeen: Int64
    public let expiresAt: Int64

    public init(id: String, createdAt: Int64, lastSeen: Int64, expiresAt: Int64) {
        self.id = id
        self.createdAt = createdAt
        self.lastSeen = lastSeen
        self.expiresAt = expiresAt
    }
}
