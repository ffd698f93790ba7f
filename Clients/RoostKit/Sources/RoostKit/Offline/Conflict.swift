import Foundation

/// A queued write the server refused because the document changed (or
/// vanished) since the local copy was taken.
public struct Conflict: Sendable, Hashable {
    /// The collection.
    public let collection: String
    /// The document's id.
    public let id: String
    /// What the queued write was.
    public let operation: PendingWrite.Operation
    /// The local copy with every queued change applied (nil for a delete).
    public let local: JSONValue?
    /// The server's current copy (nil when the server deleted it).
    public let server: JSONValue?
}

/// What to do about a ``Conflict``.
public enum ConflictResolution: Sendable, Hashable {
    /// Keep the server's copy; the local change is kept in ``OfflineStore/conflicts()`` for the app to show.
    case keepServer
    /// Write the local copy over the server's (conditionally on the server's current version).
    case keepLocal
    /// Write this merged document (conditionally on the server's current version).
    case merge(JSONValue)
}

/// Decides a ``Conflict``. The default keeps the server's copy.
public typealias ConflictResolver = @Sendable (Conflict) async -> ConflictResolution

/// A write waiting in the outbox.
public struct PendingWrite: Sendable, Hashable {
    /// Its place in the outbox: writes are sent in this order.
    public let sequence: Int64
    /// The collection.
    public let collection: String
    /// The document's id.
    public let id: String
    /// What it does.
    public let operation: Operation
    /// The body it sends (document, merge patch, or nil for a delete).
    public let body: JSONValue?
    /// The version the local copy had (`If-Match`), nil for a create or when the create before it has not been sent.
    public let ifMatch: String?

    /// The kinds of queued write.
    public enum Operation: String, Sendable, Hashable { case create, replace, patch, delete }
}

/// A conflict as kept in the local `conflicts` table.
public struct RecordedConflict: Sendable, Hashable {
    /// Its row number, for ``OfflineStore/dismissConflict(_:)``.
    public let sequence: Int64
    /// The conflict.
    public let conflict: Conflict
    /// Why: `PreconditionFailed`, `NotFound`, or the server's refusal code.
    public let reason: String
}

/// What one ``OfflineStore/sync()`` did.
public struct SyncReport: Sendable, Hashable {
    /// Queued writes the server accepted.
    public var sent = 0
    /// Queued writes that met a conflict (resolved or recorded).
    public var conflicts = 0
    /// Writes still queued (the server was unreachable or busy).
    public var pending = 0
    /// Documents changed in the mirrors.
    public var changed = 0
    /// Documents deleted from the mirrors.
    public var deleted = 0
    /// Full resyncs after `CursorExpired`.
    public var resyncs = 0
}
