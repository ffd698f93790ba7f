import Foundation
@testable import Roost
import Store
import StoreSQLite
import StorePostgres
import Testing

/// `database_url`, `node_id` and the settings that name stored members:
/// which engine a configuration selects, and what it refuses.
@Suite struct DatabaseConfigTests {
    @Test func sqliteInTheDataDirectoryIsTheDefault() throws {
        let engine = try RoostConfig.loaded("data_dir: /srv/roost").storeEngine()
        let sqlite = try #require(engine as? SQLiteEngine)
        #expect(sqlite.path == "/srv/roost/roost.db" && engine.isEmbedded)
    }

    @Test(arguments: [
        ("database_url: postgres://roost@db:5432/app", [String: String](), "postgres://roost@db:5432/app"),
        ("", ["ROOST_DATABASE_URL": "postgresql://roost@db/app"], "postgresql://roost@db/app"),
        ("database_url: postgres://a@x/one", ["ROOST_DATABASE_URL": "postgres://b@y/two"], "postgres://b@y/two"),
    ])
    func postgresFromTheFileOrTheEnvironment(yaml: String, env: [String: String], url: String) throws {
        let engine = try RoostConfig.loaded(yaml, env: env).storeEngine()
        let pg = try #require(engine as? PostgresEngine)
        #expect(pg.url == url && !engine.isEmbedded)
    }

    @Test(arguments: ["database_url: mysql://x/y", "database_url: /var/lib/roost.db", "node_id: \"\"",
                       "claim_lease_seconds: 9", "claim_lease_seconds: 3601", "claim_lease_seconds: soon"])
    func refusesWhatItCannotUse(yaml: String) {
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded(yaml) }
    }

    @Test func nodeIDIsStableAcrossRestartsAndCanBeSet() throws {
        let first = try RoostConfig.loaded("data_dir: /srv/a/../roost\ndatabase_url: postgres://x/y")
        #expect(first.nodeID.hasSuffix(":/srv/roost"), "host and the data directory, the same at every start")
        #expect(try RoostConfig.loaded("data_dir: /srv/other").nodeID != first.nodeID)
        let named = try RoostConfig.loaded("database_url: postgres://x/y\nnode_id: eu-1")
        let engine = try named.storeEngine() as? PostgresEngine
        #expect(named.nodeID == "eu-1" && engine?.nodeID == "eu-1")
    }

    @Test(arguments: [("", 60.0), ("claim_lease_seconds: 15", 15.0), ("claim_lease_seconds: 3600", 3600.0)])
    func claimLeaseReachesTheEngine(yaml: String, seconds: Double) throws {
        let engine = try RoostConfig.loaded("database_url: postgres://x/y\n" + yaml).storeEngine()
        #expect((engine as? PostgresEngine)?.claimLease == seconds)
    }

    @Test func theLogNamesTheDatabaseWithoutItsPassword() throws {
        let config = try RoostConfig.loaded("database_url: postgres://roost:hunter2@db.internal:5433/app")
        #expect(config.databaseDescription == "postgresql://db.internal:5433/app")
        #expect(!config.databaseDescription.contains("hunter2"))
    }

    @Test(arguments: ["users: {private_fields: [\"we\\\"ird\"]}", "users: {private_fields: [\"\"]}", "users: {private_fields: [\"a\\\\b\"]}"])
    func refusesPrivateFieldsItCouldNotRedact(yaml: String) {
        #expect(throws: RoostConfig.Invalid.self) { try RoostConfig.loaded(yaml) }
    }
}
