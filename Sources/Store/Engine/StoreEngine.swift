import Logging

/// The database roostd keeps its data in, and how connections to it open:
/// SQLite in the data directory (`SQLiteEngine`, the default) or PostgreSQL
/// (`PostgresEngine`, chosen by `database_url`). Handlers see only
/// `DocumentReading` / `DocumentWriting`.
public protocol StoreEngine: Sendable {
    /// "sqlite" or "postgresql", for logs, metrics and the console.
    var name: String { get }
    /// True when the database is a file of this node's data directory:
    /// online backups, WAL checkpoints and the page cache apply only then.
    var isEmbedded: Bool { get }
    /// A connection for one reader thread (query-only on SQLite). `role`
    /// names it for operators (PostgreSQL's `application_name`, `roostd-<role>`).
    func openReader(role: String) throws -> any DocumentReading
    /// The writer's connection: one per process.
    func openWriter(ids: DocumentID, logger: Logger) throws -> any DocumentWriting
    /// Calls `wake` whenever any node commits changes (PostgreSQL: LISTEN /
    /// NOTIFY, a wake-up only: the feed table is the truth). nil when only
    /// this process writes, so the writer's own after-commit call suffices.
    func watchCommits(logger: Logger, _ wake: @escaping @Sendable () -> Void) throws -> (any CommitWatch)?
}

extension StoreEngine {
    /// A connection for one reader thread, in the role "reader".
    public func openReader() throws -> any DocumentReading { try openReader(role: "reader") }
}

/// A running watch for other nodes' commits; `stop` ends it.
public protocol CommitWatch: AnyObject, Sendable {
    func stop()
}
