import CPostgres
import Store

/// Statements sent to PostgreSQL in one write and answered in one read
/// (libpq's pipeline mode): the server runs them in order, and after the
/// first error it skips the rest up to the pipeline's end, as a transaction
/// block would. Our pipelines are small (a few statements, one result that
/// matters, the last), so blocking mode cannot deadlock on full buffers.
struct PGPipeline {
    /// One statement of a pipeline.
    enum Command {
        /// SQL run as an unnamed statement (extended protocol), parameters as text.
        case text(String, [SQLValue])
        /// Prepares `sql` as `name`.
        case prepare(name: String, sql: String, count: Int)
        /// Runs prepared statement `name`.
        case prepared(name: String, [SQLValue])
    }

    /// What came back.
    struct Outcome {
        /// Per command: true when the server ran it without error.
        var succeeded: [Bool]
        /// The first error: of a statement, of libpq, or of a lost connection.
        var error: PGError?
        /// The last command's result when it ran (the caller clears it).
        var last: OpaquePointer?
        /// libpq could not leave pipeline mode on a live connection: it must be reset.
        var stuck = false

        func succeeded(_ index: Int) -> Bool { succeeded.indices.contains(index) && succeeded[index] }
    }

    let commands: [Command]
    private let parameters: [PGTextParameters]

    /// Checks and converts every parameter before anything is sent.
    init(_ commands: [Command]) throws {
        self.commands = commands
        parameters = try commands.map { command in
            switch command {
            case .text(_, let params), .prepared(_, let params): try PGTextParameters(params)
            case .prepare: try PGTextParameters([])
            }
        }
    }

    /// Sends every command, then reads every answer (never stops half-way
    /// through the reading on a live connection, so it stays usable).
    func run(on conn: OpaquePointer) -> Outcome {
        var outcome = Outcome(succeeded: Array(repeating: false, count: commands.count))
        guard let sent = start(on: conn, &outcome) else { return outcome }
        finish(sent, on: conn, &outcome)
        return outcome
    }

    /// Enters pipeline mode and sends every command and the pipeline's end;
    /// the number sent, or nil when nothing can be read (`outcome` says why).
    func start(on conn: OpaquePointer, _ outcome: inout Outcome) -> Int? {
        guard PQenterPipelineMode(conn) == 1 else {
            outcome.error = Self.connectionError(conn)
            outcome.stuck = PQstatus(conn) == CONNECTION_OK
            return nil
        }
        var sent = 0
        while sent < commands.count, send(sent, conn) { sent += 1 }
        guard PQpipelineSync(conn) == 1 else {
            // Nothing tells the server to answer: reading could wait forever.
            outcome.error = Self.connectionError(conn)
            outcome.stuck = PQstatus(conn) == CONNECTION_OK
            return nil
        }
        return sent
    }

    /// Reads the answers of the `sent` commands and the pipeline's end, and leaves pipeline mode.
    func finish(_ sent: Int, on conn: OpaquePointer, _ outcome: inout Outcome) {
        read(sent, conn, into: &outcome)
        if sent < commands.count, outcome.error == nil { outcome.error = Self.connectionError(conn) }
        if PQstatus(conn) == CONNECTION_OK {
            readSync(conn, into: &outcome)
            if PQexitPipelineMode(conn) != 1 { outcome.stuck = true }
        }
        if outcome.error == nil, PQstatus(conn) != CONNECTION_OK { outcome.error = Self.connectionError(conn) }
    }

    private func send(_ index: Int, _ conn: OpaquePointer) -> Bool {
        let values = parameters[index].values
        switch commands[index] {
        case .text(let sql, let params):
            return PQsendQueryParams(conn, sql, Int32(params.count), nil, values, nil, nil, 0) == 1
        case .prepare(let name, let sql, let count):
            return PQsendPrepare(conn, name, sql, Int32(count), nil) == 1
        case .prepared(let name, let params):
            return PQsendQueryPrepared(conn, name, Int32(params.count), values, nil, nil, 0) == 1
        }
    }

    /// Each sent command's results (one, then NULL); stops when the connection is gone.
    private func read(_ sent: Int, _ conn: OpaquePointer, into outcome: inout Outcome) {
        for index in 0..<sent {
            var answers = 0
            while answers < 8, let result = PQgetResult(conn) {
                answers += 1
                let status = PQresultStatus(result)
                if status == PGRES_PIPELINE_ABORTED {
                    PQclear(result)
                } else if let error = Self.error(of: result, conn) {
                    if outcome.error == nil { outcome.error = error }
                    PQclear(result)
                } else {
                    outcome.succeeded[index] = true
                    if index == commands.count - 1, outcome.last == nil { outcome.last = result } else { PQclear(result) }
                }
                if PQstatus(conn) != CONNECTION_OK { return }
            }
            if answers >= 8 { outcome.stuck = true; return }
        }
    }

    /// The pipeline's end marker.
    private func readSync(_ conn: OpaquePointer, into outcome: inout Outcome) {
        guard !outcome.stuck, let result = PQgetResult(conn) else { outcome.stuck = true; return }
        if PQresultStatus(result) != PGRES_PIPELINE_SYNC { outcome.stuck = true }
        PQclear(result)
    }

    /// The error a result reports, or nil when it succeeded.
    static func error(of result: OpaquePointer?, _ conn: OpaquePointer) -> PGError? {
        guard let result else { return connectionError(conn) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return nil
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
                ?? String(cString: PQerrorMessage(conn))
            return PGError(sqlState: state, message: message)
        }
    }

    /// libpq's own error: a lost connection is 08006.
    static func connectionError(_ conn: OpaquePointer) -> PGError {
        PGError(sqlState: PQstatus(conn) == CONNECTION_OK ? "" : "08006",
                message: String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
