@testable import Store
@testable import StoreSQLite
@testable import StorePostgres
import Testing

/// Each engine's migrations carry distinct, increasing versions: two branches
/// that both add "the next" migration must not both merge as the same number
/// (a database would apply one and skip the other forever).
@Suite struct MigrationOrderTests {
    @Test func sqliteVersionsIncrease() {
        let versions = Migrations.all.map(\.version)
        #expect(versions == Array(1...versions.count), "SQLite migrations: \(versions)")
    }

    @Test func postgresqlVersionsIncrease() {
        let versions = PostgresMigrations.all.map(\.version)
        #expect(versions == Array(1...versions.count), "PostgreSQL migrations: \(versions)")
    }
}
