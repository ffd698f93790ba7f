import CPostgres
import Foundation
import Store

/// One blocking libpq connection, confined to the thread that uses it (as
/// `SQLiteConnection` is): one per reader thread and one for the writer.
///
/// Every statement is prepared once per connection (`PQprepare`) and cached
/// by its SQL text; values are always parameters, sent as text. A lost
/// connection throws a retryable `PGError` and is reset before the next
/// statement, never a crash.
public final class PGConnection {
    private var handle: OpaquePointer?
    /// Prepared statement names by SQL text.
    private var statements: [String: String] = [:]
    private var nextStatement = 0
    private static let cacheLimit = 512
    /// The depth of `transaction` calls: only the outermost begins and commits.
    private var transactionDepth = 0

    /// Connects with a libpq connection string or URL (`postgres://user@host:port/db`);
    /// an empty string uses libpq's `PG*` environment variables alone.
    public init(url: String) throws {
        try PGLibrary.load()
        guard let conn = PQconnectdb(url) else { throw PGError(sqlState: "", message: "libpq could not allocate a connection") }
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
    private func live() throws -> OpaquePointer {
        guard let handle else { throw PGError(sqlState: "08003", message: "the connection is closed") }
        if PQstatus(handle) != CONNECTION_OK {
            // Inside a transaction a new connection would run the rest in
            // autocommit: fail until the transaction has ended instead.
            guard transactionDepth == 0 else {
                throw PGError(sqlState: "08006", message: "the connection was lost inside a transaction; nothing of it was committed")
            }
            PQreset(handle)
            statements.removeAll()
            guard PQstatus(handle) == CONNECTION_OK else {
                throw PGError(sqlState: "08006", message: String(cString: PQerrorMessage(handle)))
            }
        }
        return handle
    }

    /// Runs `sql` with `params` as a prepared statement and maps each row.
    @discardableResult
    public func query<T>(_ sql: String, _ params: [SQLValue] = [], _ map: (PGRow) throws -> T) throws -> [T] {
        let conn = try live()
        let name = try prepared(sql, params.count, conn)
        let result = try withTextParameters(params) { values in
            PQexecPrepared(conn, name, Int32(params.count), values, nil, nil, 0)
        }
        defer { PQclear(result) }
        try check(result, conn)
        guard let result else { return [] }
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

    /// Runs a script of fixed SQL (several statements, no parameters): migrations.
    public func execute(_ script: String) throws {
        let conn = try live()
        let result = PQexec(conn, script)
        defer { PQclear(result) }
        try check(result, conn)
    }

    /// Runs `body` in a transaction (a savepoint when one is already open):
    /// committed when it returns, rolled back when it throws. The depth
    /// drops only after COMMIT ran, so a connection lost inside a
    /// transaction fails everything up to and including its COMMIT (see
    /// `live`): work done before the loss is never reported as committed.
    /// - Parameter begin: the statement that opens an outermost transaction
    ///   (e.g. `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`).
    public func transaction<T>(begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        let outer = transactionDepth == 0
        let savepoint = "s\(transactionDepth)"
        try execute(outer ? begin : "SAVEPOINT \(savepoint)")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        let value: T
        do {
            value = try body()
        } catch {
            try? execute(outer ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT \(savepoint)")
            throw error
        }
        do {
            try execute(outer ? "COMMIT" : "RELEASE SAVEPOINT \(savepoint)")
        } catch {
            try? execute(outer ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT \(savepoint)")
            throw error
        }
        return value
    }

    /// True while a transaction opened by `transaction` is running.
    public var inTransaction: Bool { transactionDepth > 0 }

    private func prepared(_ sql: String, _ count: Int, _ conn: OpaquePointer) throws -> String {
        if let name = statements[sql] { return name }
        if statements.count >= Self.cacheLimit {
            try execute("DEALLOCATE ALL")
            statements.removeAll()
        }
        nextStatement += 1
        let name = "r\(nextStatement)"
        let result = PQprepare(conn, name, sql, Int32(count), nil)
        defer { PQclear(result) }
        try check(result, conn)
        statements[sql] = name
        return name
    }

    private func check(_ result: OpaquePointer?, _ conn: OpaquePointer) throws {
        guard let result else {
            throw PGError(sqlState: PQstatus(conn) == CONNECTION_OK ? "" : "08006", message: String(cString: PQerrorMessage(conn)))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
                ?? String(cString: PQerrorMessage(conn))
            throw PGError(sqlState: state, message: message)
        }
    }

    /// Calls `body` with C strings for `params` (NULL for `.null`), alive for the call.
    private func withTextParameters<R>(_ params: [SQLValue], _ body: ([UnsafePointer<CChar>?]) -> R) throws -> R {
        var owned: [UnsafeMutablePointer<CChar>?] = []
        owned.reserveCapacity(params.count)
        defer { for p in owned { free(p) } }
        for value in params {
            switch value {
            case .null: owned.append(nil)
            case .int(let i): owned.append(strdup(String(i)))
            case .double(let d):
                guard d.isFinite else { throw StoreError.invalid("A number must be finite.") }
                owned.append(strdup("\(d)"))
            case .text(let s):
                guard !s.utf8.contains(0) else { throw StoreError.invalid("Text may not contain the NUL character.") }
                owned.append(strdup(s))
            }
        }
        return body(owned.map { $0.map { UnsafePointer($0) } })
    }
}
