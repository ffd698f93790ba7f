import Logging
import Store

/// SQLite in WAL mode, one file in the data directory.
public struct SQLiteEngine: StoreEngine {
    public let path: String
    /// `PRAGMA synchronous` for the writer ("NORMAL", or "FULL" for `durability: power`).
    public let synchronous: String

    public init(path: String, synchronous: String = "NORMAL") {
        self.path = path
        self.synchronous = synchronous
    }

    public var name: String { "sqlite" }
    public var isEmbedded: Bool { true }

    /// A reader; the `loop` role's (an event loop's own, `LoopReads`) never
    /// waits, for a lock or for the disk: such a read fails at once instead.
    public func openReader(role: String) throws -> any DocumentReading {
        try DocumentReader(path: path, neverWaits: role == "loop")
    }

    public func openWriter(ids: DocumentID, logger: Logger) throws -> any DocumentWriting {
        try DocumentWriter(path: path, synchronous: synchronous, ids: ids, logger: logger)
    }

    /// One process writes the file: its writer wakes the live streams itself.
    public func watchCommits(logger: Logger, _ wake: @escaping @Sendable () -> Void) throws -> (any CommitWatch)? { nil }
}
