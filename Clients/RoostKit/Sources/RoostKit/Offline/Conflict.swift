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
    /// Queued writes that met a conflict (resolved or recorded). Network
    /// failures are never conflicts.
    public var conflicts = 0
    /// Writes the server failed this time (a 5xx): still queued, tried again by the next sync.
    public var failed = 0
    /// Writes moved to the dead-letter list in this sync.
    public var deadLettered = 0
    /// Writes still queued.
    public var pending = 0
    /// Writes in the dead-letter list (``OfflineStore/deadLetters()``).
    public var deadLetters = 0
    /// Mirrors the server refused to sync, with why; the others were pulled.
    public var mirrorFailures: [String: String] = [:]
    /// Documents changed in the mirrors.
    public var changed = 0
    /// Documents deleted from the mirrors.
    public var deleted = 0
    /// Full resyncs after `CursorExpired`.
    public var resyncs = 0
}

/// A queued write the server would not take: refused for good (400, 403,
/// 413, …) or failed ``OfflineStore/maxAttempts`` times (a hook's 500).
/// It no longer blocks the outbox; the app can show it, then
/// ``OfflineStore/retryDeadLetter(_:)`` or ``OfflineStore/discardDeadLetter(_:)``.
public struct DeadLetter: Sendable, Hashable {
    /// Its row number in the dead-letter list.
    public let sequence: Int64
    /// The write, as it was queued.
    public let write: PendingWrite
    /// The server's status, nil for a write moved because an earlier write of the same document was.
    public let status: Int?
    /// The server's error code and sentence, or why it followed another.
    public let error: String
    /// How many times the server failed it.
    public let attempts: Int
}
