import Foundation
import Store
import StorePostgres

extension RoostConfig {
    /// `database_url` (or `ROOST_DATABASE_URL`): `postgres://user@host:port/db`
    /// or `postgresql://…`; parts left out come from libpq's `PG*`
    /// variables. Empty or absent: SQLite in the data directory.
    mutating func setDatabase(_ key: String, _ value: Any, source: String) throws -> Bool {
        if key == "node_id" {
            let id = "\(value)".trimmingCharacters(in: .whitespaces)
            guard !id.isEmpty, id.utf8.count <= 200 else { throw Invalid("\(source): node_id must be 1 to 200 bytes") }
            configuredNodeID = id
            return true
        }
        if key == "claim_lease_seconds" {
            guard let seconds = (value as? Int) ?? Int("\(value)"), (10...3600).contains(seconds) else {
                throw Invalid("\(source): claim_lease_seconds must be a whole number from 10 to 3600")
            }
            claimLeaseSeconds = seconds
            return true
        }
        guard key == "database_url" else { return false }
        let url = "\(value)".trimmingCharacters(in: .whitespaces)
        if url.isEmpty {
            databaseURL = nil
        } else if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            databaseURL = url
        } else {
            throw Invalid("\(source): database_url must start with postgres:// or postgresql:// (or be empty for SQLite)")
        }
        return true
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
