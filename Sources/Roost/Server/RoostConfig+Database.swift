import Foundation
import Store

extension RoostConfig {
    /// `database_url` (or `ROOST_DATABASE_URL`): `postgres://user@host:port/db`
    /// or `postgresql://…`; parts left out come from libpq's `PG*`
    /// variables. Empty or absent: SQLite in the data directory.
    mutating func setDatabase(_ key: String, _ value: Any, source: String) throws -> Bool {
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

    /// Why roostd takes no backups when its data live in PostgreSQL.
    static let externalDatabaseBackups = "The data live in PostgreSQL (database_url): back them up with PostgreSQL's own tools "
        + "(pg_dump, or base backups with WAL archiving for point-in-time recovery) and keep bucket versioning on; see docs/SCALING.md."

    /// The engine this configuration selects, with its connection settings.
    public func storeEngine() throws -> any StoreEngine {
        if databaseURL != nil { throw Invalid("database_url: PENDING") }
        return SQLiteEngine(path: dataDir + "/roost.db", synchronous: durability == .power ? "FULL" : "NORMAL")
    }

    /// The database for logs: SQLite's file, or PostgreSQL's host and name without credentials.
    public var databaseDescription: String {
        guard let databaseURL else { return dataDir + "/roost.db" }
        return databaseURL
    }
}
