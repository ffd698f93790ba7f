import CPostgres
import Foundation
import Store

/// One blocking libpq connection, confined to the thread that uses it (as
/// `SQLiteConnection` is): one per reader thread and one for the writer.
///
/// Every statement is prepared once per connection and cached by its SQL
/// text (at most `cacheLimit`, then `DEALLOCATE ALL`); values are always
/// parameters, sent as text. Statements whose result is not needed at once
/// (BEGIN, SAVEPOINT, RELEASE, `runDeferred`) wait and go to the server in
/// one pipeline with the next statement that needs its result
/// (`PGConnection+Transaction`, `PGPipeline`). A lost connection throws a
/// retryable `PGError` and is reset before the next statement, never a crash.
public final class PGConnection {
    private(set) var handle: OpaquePointer?
    /// Prepared statement names by SQL text.
    var statements: [String: String] = [:]
    var nextStatement = 0
    static let cacheLimit = 512
    /// Statements queued until the next one whose result is needed.
    var deferred: [PGPipeline.Command] = []
    /// The open `transaction` calls, outermost first: the index in
    /// `deferred` of each one's BEGIN or SAVEPOINT while it is unsent, nil once sent.
    var frames: [Int?] = []
    /// A pipeline ended in a state libpq could not leave: treated as a lost connection.
    var broken = false
    /// A read-only transaction's COMMIT, sent and not yet answered (`transaction(waitForCommit:)`).
    var unanswered: (pipeline: PGPipeline, sent: Int)?
    /// Exchanges with the server so far (statements, pipelines, prepares): tests assert savings with it.
    public internal(set) var roundTrips = 0
    /// Runs before every statement a caller issues (`query`, `execute`, a
    /// `transaction`), so work its owner held back in memory is queued
    /// first (the writer's held inserts, `PostgresDocumentWriter+HeldInserts`).
    var beforeStatement: ((_ opensTransaction: Bool) throws -> Void)?

    /// Connects with a libpq connection string or URL (`postgres://user@host:port/db`);
    /// an empty string uses libpq's `PG*` environment variables alone. An
    /// attempt fails after `connect_timeout` (5 s unless the URL says otherwise).
    public init(url: String) throws {
        try PGLibrary.load()
        let conninfo = PGConnectionString.withDefaults(url, environment: ProcessInfo.processInfo.environment)
        guard let conn = PQconnectdb(conninfo) else { throw PGError(sqlState: "", message: "libpq could not allocate a connection") }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(conn))
            PQfinish(conn)
            throw PGError(sqlState: "08001", message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        handle = conn
        // Server notices (e.g. "relation already exists, skipping") are not errors; keep them off stderr.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        try execute("SET client_encoding = 'UTF8'")
    }

    deinit { if let handle { PQfinish(handle) } }

    /// The connection, reset first when the last statement found it broken.
    func live() throws -> OpaquePointer {
        guard let handle else { throw PGError(sqlState: "08003", message: "the connection is closed") }
        readUnanswered(handle)
        if broken || PQstatus(handle) != CONNECTION_OK {
            // Inside a transaction the server saw begin, a new connection would
            // run the rest in autocommit: fail until the transaction has ended instead.
            guard !transactionSent else {
                throw PGError(sqlState: "08006", message: "the connection was lost inside a transaction; nothing of it was committed")
            }
            PQreset(handle)
            broken = false
            statements.removeAll()
            guard PQstatus(handle) == CONNECTION_OK else {
                throw PGError(sqlState: "08006", message: String(cString: PQerrorMessage(handle)))
            }
        }
        return handle
    }

    /// Runs `sql` with `params` as a prepared statement (or, with `prepared`
    /// false, an unnamed one: for SQL whose text varies, so it does not churn
    /// the cache) and maps each row; deferred statements go first, in the
    /// same pipeline, and their errors surface here.
    @discardableResult
    public func query<T>(_ sql: String, _ params: [SQLValue] = [], prepared: Bool = true, _ map: (PGRow) throws -> T) throws -> [T] {
        try beforeStatement?(false)
        let conn = try live()
        let result = try prepared ? resultOf(sql, params, conn) : unnamedResult(sql, params, conn)
        defer { PQclear(result) }
        var rows: [T] = []
        let count = PQntuples(result)
        rows.reserveCapacity(Int(count))
        for i in 0..<count { rows.append(try map(PGRow(result: result, row: i))) }
        return rows
    }

    /// Runs a statement that returns no rows we need.
    public func run(_ sql: String, _ params: [SQLValue] = []) throws {
        _ = try query(sql, params) { _ in () }
    }

    /// The first row's mapped value, or nil when there is none.
    public func first<T>(_ sql: String, _ params: [SQLValue] = [], _ map: (PGRow) throws -> T) throws -> T? {
        try query(sql, params, map).first
    }

    /// Runs a script of fixed SQL (several statements, no parameters):
    /// migrations. Deferred statements are sent first.
    public func execute(_ script: String) throws {
        try beforeStatement?(false)
        try flush()
        let conn = try live()
        roundTrips += 1
        let result = PQexec(conn, script)
        defer { PQclear(result) }
        try check(result, conn)
    }

    /// True while a transaction opened by `transaction` is running.
    public var inTransaction: Bool { !frames.isEmpty }

    /// The server's transaction failed (a statement's error not yet rolled back to a savepoint).
    var transactionFailed: Bool { handle.map { PQtransactionStatus($0) == PQTRANS_INERROR } ?? false }

    /// The checked result of prepared statement `sql`, sent with the deferred statements.
    private func resultOf(_ sql: String, _ params: [SQLValue], _ conn: OpaquePointer) throws -> OpaquePointer {
        if deferred.isEmpty, let name = statements[sql] {
            roundTrips += 1
            let result = try withTextParameters(params) { values in
                PQexecPrepared(conn, name, Int32(params.count), values, nil, nil, 0)
            }
            do { try check(result, conn) } catch { PQclear(result); throw error }
            guard let result else { throw PGError(sqlState: "", message: "libpq answered no result") }
            return result
        }
        var commands: [PGPipeline.Command] = []
        var name = statements[sql]
        var prepareAt: Int?, deallocateAt: Int?
        if name == nil {
            if statements.count >= Self.cacheLimit {
                deallocateAt = deferred.count + commands.count
                commands.append(.text("DEALLOCATE ALL", []))
            }
            nextStatement += 1
            name = "r\(nextStatement)"
            prepareAt = deferred.count + commands.count
            commands.append(.prepare(name: name!, sql: sql, count: params.count))
        }
        commands.append(.prepared(name: name!, params))
        let outcome = try sendWithDeferred(commands, conn)
        // The cache follows what the server ran: a pipeline aborted before these left it as it was.
        if let deallocateAt, outcome.succeeded(deallocateAt) { statements.removeAll() }
        if let prepareAt, outcome.succeeded(prepareAt) { statements[sql] = name }
        if let error = outcome.error { PQclear(outcome.last); throw error }
        guard let result = outcome.last else { throw PGError(sqlState: "", message: "libpq answered no result") }
        return result
    }

    /// The checked result of `sql` run as an unnamed statement, sent with the deferred statements.
    private func unnamedResult(_ sql: String, _ params: [SQLValue], _ conn: OpaquePointer) throws -> OpaquePointer {
        let outcome = try sendWithDeferred([.text(sql, params)], conn)
        if let error = outcome.error { PQclear(outcome.last); throw error }
        guard let result = outcome.last else { throw PGError(sqlState: "", message: "libpq answered no result") }
        return result
    }

    /// Runs one fixed statement (COMMIT, ROLLBACK) after the deferred ones, in one exchange.
    func command(_ sql: String) throws {
        let conn = try live()
        if deferred.isEmpty {
            roundTrips += 1
            let result = PQexec(conn, sql)
            defer { PQclear(result) }
            try check(result, conn)
            return
        }
        let outcome = try sendWithDeferred([.text(sql, [])], conn)
        PQclear(outcome.last)
        if let error = outcome.error { throw error }
    }

    /// Sends the deferred statements now, without a statement of its own.
    public func flush() throws {
        try beforeStatement?(false)
        guard !deferred.isEmpty else { return }
        let conn = try live()
        let outcome = try sendWithDeferred([], conn)
        PQclear(outcome.last)
        if let error = outcome.error { throw error }
    }

    /// Sends the deferred statements and `sql` without waiting for the
    /// answers: they are read (and their errors dropped) before the next statement.
    func commandWithoutWaiting(_ sql: String) throws {
        let conn = try live()
        let pipeline = try PGPipeline(deferred + [.text(sql, [])])
        deferred.removeAll()
        for i in frames.indices { frames[i] = nil }
        var outcome = PGPipeline.Outcome(succeeded: [])
        if let sent = pipeline.start(on: conn, &outcome) {
            unanswered = (pipeline, sent)
        } else if outcome.stuck {
            broken = true
        }
    }

    /// Reads the answers `commandWithoutWaiting` left (no exchange: they have arrived or are on their way).
    private func readUnanswered(_ conn: OpaquePointer) {
        guard let (pipeline, sent) = unanswered else { return }
        unanswered = nil
        var outcome = PGPipeline.Outcome(succeeded: Array(repeating: false, count: pipeline.commands.count))
        pipeline.finish(sent, on: conn, &outcome)
        PQclear(outcome.last)
        if outcome.stuck { broken = true }
    }

    /// The deferred statements and `commands` in one pipeline. The deferred
    /// ones count as sent once they were handed to libpq, whatever the outcome.
    private func sendWithDeferred(_ commands: [PGPipeline.Command], _ conn: OpaquePointer) throws -> PGPipeline.Outcome {
        let all = deferred + commands
        let pipeline = try PGPipeline(all)  // parameters checked before anything is sent
        deferred.removeAll()
        for i in frames.indices { frames[i] = nil }
        roundTrips += 1
        let outcome = pipeline.run(on: conn)
        if outcome.stuck { broken = true }
        return outcome
    }

    func check(_ result: OpaquePointer?, _ conn: OpaquePointer) throws {
        if let error = PGPipeline.error(of: result, conn) { throw error }
    }
}
