import Foundation
import Store
import StoreSQLite
import StorePostgres

extension RoostConfig {
    /// `url` with any password left out (userinfo and `password=`), for logs and `check-config`.
    static func redactedURL(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
           let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
            text.replaceSubrange(text.index(after: colon)..<at, with: "***")
        }
        return text.replacingOccurrences(of: #"password=[^&]*"#, with: "password=***", options: .regularExpression)
    }

    /// This node's name among nodes sharing a database (`node_id`; default:
    /// host and data directory, which the data directory's lock keeps to
    /// one process at a time).
    public var nodeID: String {
        if let configuredNodeID { return configuredNodeID }
        let dir = URL(fileURLWithPath: dataDir).standardizedFileURL.path
        return "\(PostgresNode.hostName):\(dir)"
    }

    /// Why roostd takes no backups when its data live in PostgreSQL.
    static let externalDatabaseBackups = "The data live in PostgreSQL (database_url): back them up with PostgreSQL's own tools "
        + "(pg_dump, or base backups with WAL archiving for point-in-time recovery) and keep bucket versioning on; see docs/SCALING.md."

    /// The engine this configuration selects, with its connection settings.
    public func storeEngine() throws -> any StoreEngine {
        if let databaseURL { return PostgresEngine(url: databaseURL, nodeID: nodeID, claimLease: Double(claimLeaseSeconds)) }
        return SQLiteEngine(path: dataDir + "/roost.db", synchronous: durability == .power ? "FULL" : "NORMAL")
    }

    /// The database for logs: SQLite's file, or PostgreSQL's host and name without credentials.
    public var databaseDescription: String {
        guard let databaseURL else { return dataDir + "/roost.db" }
        return PostgresEngine.describe(url: databaseURL)
    }
}
