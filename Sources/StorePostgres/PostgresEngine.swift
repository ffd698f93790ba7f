import Foundation
import Logging
import Store

/// PostgreSQL (≥ 15) through libpq: every reader thread and the writer get
/// their own blocking connection to `url`. Many roostd nodes may share the
/// database (docs/SCALING.md).
public struct PostgresEngine: StoreEngine {
    /// A libpq URL; parts it leaves out come from the `PG*` variables.
    public let url: String
    /// This node among the nodes: thumbnail jobs and webhook deliveries are
    /// claimed under it. Stable across restarts (roostd names it after its
    /// host and data directory), so a restarted node takes its own claims
    /// back at once instead of waiting out their lease.
    public let nodeID: String
    /// Seconds a claim stays this node's unless renewed (`claim_lease_seconds`).
    public let claimLease: Double

    public init(url: String, nodeID: String = PostgresNode.id, claimLease: Double = PostgresNode.defaultLease) {
        self.url = url
        self.nodeID = nodeID
        self.claimLease = claimLease
    }

    public var name: String { "postgresql" }
    public var isEmbedded: Bool { false }

    public func openReader(role: String) throws -> any DocumentReading {
        let reader = try PostgresDocumentReader(url: named(role))
        reader.nodeID = nodeID
        reader.jobWorker = nodeID
        reader.claimLease = claimLease
        return reader
    }

    public func openWriter(ids: DocumentID, logger: Logger) throws -> any DocumentWriting {
        let writer = try PostgresDocumentWriter(url: named("writer"), ids: ids, logger: logger)
        writer.nodeID = nodeID
        writer.analyzer = PostgresAnalyzer(url: named("analyze"), logger: logger)
        writer.jobWorker = nodeID
        writer.claimLease = claimLease
        return writer
    }

    /// Listens for every node's commits (`NOTIFY` in each commit that wrote
    /// change rows); a wake-up only, the feed table is the truth.
    public func watchCommits(logger: Logger, _ wake: @escaping @Sendable () -> Void) throws -> (any CommitWatch)? {
        let listener = PostgresChangeListener(url: named("listen"), logger: logger, wake: wake)
        try listener.start()
        return listener
    }

    /// `url` naming its connection `roostd-<role>` for `pg_stat_activity`.
    func named(_ role: String) -> String {
        PGConnectionString.named(url, role: role, environment: ProcessInfo.processInfo.environment)
    }

    /// `url` without its password: host, port and database, for logs.
    public static func describe(url: String) -> String {
        guard let parts = URLComponents(string: url) else { return "postgresql" }
        let host = parts.host.map { $0.isEmpty ? "local socket" : $0 } ?? "local socket"
        let port = parts.port.map { ":\($0)" } ?? ""
        let db = parts.path.isEmpty ? "" : parts.path
        return "postgresql://\(host)\(port)\(db)"
    }
}
