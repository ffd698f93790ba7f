import Store
@testable import StorePostgres
import Testing

/// How PostgreSQL's errors answer (`DatabaseFailure`), without a server:
/// the SQLSTATE and message decide, as libpq reports them.
@Suite struct PGErrorTests {
    @Test(arguments: [
        // (SQLSTATE, message, busy: 503 Overloaded, out of resources: 503 DatabaseBusy, pooler advice in the log)
        ("08006", "server closed the connection unexpectedly", true, false, false),
        ("40001", "could not serialize access", true, false, false),
        ("53300", "too many connections", false, true, false),
        ("55P03", "lock not available", false, true, false),
        ("26000", "prepared statement \"r4\" does not exist", false, true, true),
        ("42P05", "prepared statement \"r3\" already exists", false, true, true),
        ("08P01", "bind message supplies 1 parameters, but prepared statement \"r4\" requires 0", false, true, true),
        ("08P01", "invalid message format", true, false, false),
        ("23505", "duplicate key value violates unique constraint", false, false, false),
    ])
    func answers(state: String, message: String, busy: Bool, outOfResources: Bool, advice: Bool) {
        let error = PGError(sqlState: state, message: message)
        #expect(error.isBusy == busy)
        #expect(error.isOutOfResources == outOfResources)
        #expect(error.description.contains("use PgBouncer in session mode") == advice)
    }
}
