import CPostgres
import Foundation
import Logging

/// Wakes this node's live hub when any node commits change rows: its own
/// connection `LISTEN`s on `PostgresDocumentWriter.notifyChannel`, and a
/// thread waits on the socket with poll(2), drains the notifications and
/// calls `wake` once per drain (many commits, one wake-up).
///
/// A notification is only a wake-up: the hub then reads the feed table,
/// which is the truth. After a lost connection the thread reconnects (once
/// per `retryDelay`), listens again and calls `wake` once, since
/// notifications sent meanwhile are gone; it does so after the first
/// connection too. Every `checkInterval` without traffic it checks that
/// the connection still answers. `stop()` ends the thread promptly, even
/// mid-connect.
public final class PostgresChangeListener: @unchecked Sendable {
    private let url: String
    private let channel: String
    private let wake: @Sendable () -> Void
    private let logger: Logger
    /// Seconds between connection attempts while the database is unreachable.
    public var retryDelay: Double = 1
    /// Seconds of silence after which the connection is checked with a query.
    public var checkInterval: Double = 5
    private let lock = NSLock()
    private var stopped = false
    private var connectCount = 0
    private let finished = DispatchSemaphore(value: 0)
    /// Written once by `stop()`; the thread polls it beside the socket.
    private var stopPipe: [Int32] = [-1, -1]
    /// A failed connection attempt was logged since the last success (one warning per outage).
    private var outageLogged = false

    /// - Parameters:
    ///   - url: a libpq URL or connection string (empty: the `PG*` variables).
    ///   - wake: called on the listener's thread; it must return quickly.
    public init(url: String, channel: String = PostgresDocumentWriter.notifyChannel, logger: Logger, wake: @escaping @Sendable () -> Void) {
        self.url = url
        self.channel = channel
        self.logger = logger
        self.wake = wake
    }

    deinit { for fd in stopPipe where fd >= 0 { close(fd) } }

    /// How many times the thread has connected and listened (1 until a connection is lost).
    public var connections: Int { lock.withLock { connectCount } }

    /// Starts the listening thread.
    public func start() throws {
        guard pipe(&stopPipe) == 0 else { throw PGError(sqlState: "", message: "pipe failed: errno \(errno)") }
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "pg-listen"
        thread.start()
    }

    /// Ends the thread and waits (up to `timeout` seconds) until it has.
    /// - Returns: false when the thread had not ended in time.
    @discardableResult
    public func stop(timeout: Double = 5) -> Bool {
        let first = lock.withLock { () -> Bool in defer { stopped = true }; return !stopped }
        guard first, stopPipe[1] >= 0 else { return true }
        var byte: UInt8 = 1
        _ = write(stopPipe[1], &byte, 1)
        return finished.wait(timeout: .now() + timeout) == .success
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run() {
        var conn: OpaquePointer?
        defer { if let conn { PQfinish(conn) } }
        while !isStopped {
            guard let live = conn else {
                conn = connect()
                if conn == nil {
                    _ = waitFor(nil, seconds: retryDelay)
                } else {
                    lock.withLock { connectCount += 1 }
                    wake() // notifications sent while no connection listened are lost
                }
                continue
            }
            switch waitFor(PQsocket(live), seconds: checkInterval) {
            case .stop:
                return
            case .timeout:
                if !answers(live) { drop(&conn, "the listening connection stopped answering") }
            case .readable:
                guard PQconsumeInput(live) == 1, PQstatus(live) == CONNECTION_OK else {
                    drop(&conn, "the listening connection was lost")
                    continue
                }
                if drainNotifications(live) { wake() }
            }
        }
    }

    private func drop(_ conn: inout OpaquePointer?, _ reason: String) {
        if let c = conn {
            logger.warning("\(reason); reconnecting", metadata: ["error": "\(String(cString: PQerrorMessage(c)).trimmingCharacters(in: .whitespacesAndNewlines))"])
            PQfinish(c)
        }
        conn = nil
    }

    /// True when any notification was waiting; all are freed.
    private func drainNotifications(_ conn: OpaquePointer) -> Bool {
        var any = false
        while let note = PQnotifies(conn) {
            any = true
            PQfreemem(note)
        }
        return any
    }

    /// A round trip on the idle connection (notifications it brings are kept for the next drain).
    private func answers(_ conn: OpaquePointer) -> Bool {
        let result = PQexec(conn, "SELECT 1")
        defer { PQclear(result) }
        let ok = result != nil && PQresultStatus(result) == PGRES_TUPLES_OK
        if ok, drainNotifications(conn) { wake() }
        return ok
    }

    /// A listening connection, or nil (logged) when none could be made;
    /// connects without blocking, so `stop()` interrupts it.
    private func connect() -> OpaquePointer? {
        guard let conn = PQconnectStart(url) else { return nil }
        var status = PGRES_POLLING_WRITING
        while PQstatus(conn) != CONNECTION_BAD, status != PGRES_POLLING_OK, status != PGRES_POLLING_FAILED {
            let event = status == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
            guard case .readable = waitFor(PQsocket(conn), events: event, seconds: 10) else {
                PQfinish(conn)
                return nil
            }
            status = PQconnectPoll(conn)
        }
        guard status == PGRES_POLLING_OK, PQstatus(conn) == CONNECTION_OK else {
            if !outageLogged {
                logger.warning("cannot connect to listen for changes; retrying", metadata: ["error": "\(String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines))"])
                outageLogged = true
            }
            PQfinish(conn)
            return nil
        }
        outageLogged = false
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        // The channel is a fixed identifier, never client text; quoted as one.
        let result = PQexec(conn, "LISTEN \"\(channel.replacingOccurrences(of: "\"", with: "\"\""))\"")
        defer { PQclear(result) }
        guard result != nil, PQresultStatus(result) == PGRES_COMMAND_OK else {
            logger.warning("LISTEN failed", metadata: ["error": "\(String(cString: PQerrorMessage(conn)))"])
            PQfinish(conn)
            return nil
        }
        return conn
    }

    private enum Wait { case readable, timeout, stop }

    /// Waits until `fd` is ready for `events` (none: only the stop pipe and the clock).
    private func waitFor(_ fd: Int32?, events: Int16 = Int16(POLLIN), seconds: Double) -> Wait {
        var fds = [pollfd(fd: stopPipe[0], events: Int16(POLLIN), revents: 0)]
        if let fd, fd >= 0 { fds.append(pollfd(fd: fd, events: events, revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), Int32(seconds * 1000))
        if isStopped || fds[0].revents != 0 { return .stop }
        return ready > 0 && fds.count > 1 && fds[1].revents != 0 ? .readable : .timeout
    }
}
