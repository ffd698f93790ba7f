@testable import StorePostgres
import Testing

/// What roostd adds to `database_url` before libpq sees it: a connect
/// timeout, and a name per role for `pg_stat_activity`.
@Suite("PostgreSQL engine: connection strings")
struct PGConnectionStringTests {
    @Test("a role becomes application_name in the URL's query or as a keyword",
          arguments: [
              ("postgres://roost@db:5432/roost", "postgres://roost@db:5432/roost?application_name=roostd-reader"),
              ("postgresql://db/roost?sslmode=require", "postgresql://db/roost?sslmode=require&application_name=roostd-reader"),
              ("host=db dbname=roost", "host=db dbname=roost application_name=roostd-reader"),
              ("", "application_name=roostd-reader"),
          ])
    func named(url: String, expected: String) {
        #expect(PGConnectionString.named(url, role: "reader", environment: [:]) == expected)
    }

    @Test("an operator's own name wins: in the URL, or PGAPPNAME")
    func operatorsName() {
        let url = "postgres://db/roost?application_name=billing"
        #expect(PGConnectionString.named(url, role: "writer", environment: [:]) == url)
        #expect(PGConnectionString.named("postgres://db/roost", role: "writer", environment: ["PGAPPNAME": "ops"]) == "postgres://db/roost")
    }

    @Test("the connect timeout follows the name in the same syntax")
    func timeoutAfterName() {
        let named = PGConnectionString.named("postgres://db/roost", role: "listen", environment: [:])
        #expect(PGConnectionString.withDefaults(named, environment: [:]) == "postgres://db/roost?application_name=roostd-listen&connect_timeout=5")
    }
}
