import Foundation
import Logging

/// Runs the writer's `ANALYZE`s after bulk loads (`TableGrowth`) on a
/// thread and connection of its own, so the writer never waits for one:
/// the batch that made a table due has its replies sent at once, and the
/// next batches are not queued behind a statistics pass.
///
/// It runs `VACUUM (ANALYZE)`: on a table that only grew, the VACUUM part
/// marks the new pages all-visible, so the primary key's index-only scans
/// (a skip page's row ids, `PostgresDocumentReader.listStatement`) need not
/// visit them. `SKIP_LOCKED` skips a table whose ShareUpdateExclusive lock is
/// held (another node's ANALYZE, a VACUUM) instead of waiting for it, and
/// the connection's `lock_timeout` and `statement_timeout` bound the rest.
/// A skipped or failed pass is only a warning: autovacuum analyzes later,
/// and the next doubling asks again. Tables due while one runs are queued
/// once each; the thread starts at the first request.
///
/// A load also ends between doublings (at 1M rows, up to half the table is
/// newer than the last pass): a table that took `settleCreates` creates or
/// more since its last pass, and a tenth of the creates it took since start,
/// gets one more once no create has come for `settleQuiet` seconds, so the
/// rows of a finished load are all-visible (a skip page's index-only scan
/// reads no heap page) and counted in the statistics. The tenth keeps a
/// writer who pauses after every thousand creates from making a big table
/// vacuumed every few seconds. A table written steadily is left to autovacuum.
/// A quiet pass that left pages not all-visible (a snapshot older than the
/// load's last rows was open, or autovacuum held the table) is tried again
/// after another quiet spell, up to `settleRetries` times.
final class PostgresAnalyzer: @unchecked Sendable {
    private let url: String
    private let logger: Logger
    private let condition = NSCondition()
    /// Tables waiting, in request order, each at most once (under `condition`).
    private var waiting: [String] = []
    private var started = false
    /// Tables analyzed or skipped so far (tests wait on it).
    private var finished = 0
    /// Creates per table since its last pass, the creates that earn a quiet pass, and when the last came (monotonic seconds).
    private var pending: [String: (creates: Int, needed: Int, last: Double)] = [:]

    static let lockTimeout = "1s"
    static let statementTimeout = "120s"
    static let settleCreates = TableGrowth.first
    static let settleQuiet = 2.0
    static let settleRetries = 5
    /// Passes in a row that left pages not all-visible, per table (under `condition`; a settled pass resets it).
    private var retries: [String: Int] = [:]

    init(url: String, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Queues `tables` for ANALYZE; returns at once.
    func request(_ tables: [String]) {
        guard !tables.isEmpty else { return }
        wake {
            for table in tables where !waiting.contains(table) { waiting.append(table) }
            for table in tables { pending[table] = nil }  // the pass asked for covers the creates so far
        }
    }

    /// Counts a commit's creates per table, for the pass after a load (`settleQuiet`); returns at once.
    func grew(_ creates: [String: (recent: Int, total: Int)]) {
        guard !creates.isEmpty else { return }
        let now = Self.seconds()
        wake {
            for (table, count) in creates {
                pending[table] = ((pending[table]?.creates ?? 0) + count.recent, max(Self.settleCreates, count.total / 10), now)
            }
        }
    }

    /// Runs `change` under the lock, signals the thread, and starts it the first time.
    private func wake(_ change: () -> Void) {
        condition.lock()
        change()
        let start = !started
        started = true
        condition.signal()
        condition.unlock()
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "analyze"
            thread.start()
        }
    }

    private static func seconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The next table to analyze: one asked for, else one a load left quiet; waits for either (under `condition`).
    private func nextTable() -> String {
        while true {
            if !waiting.isEmpty { return waiting.removeFirst() }
            let now = Self.seconds()
            let loaded = pending.filter { $0.value.creates >= $0.value.needed }
            if let (table, _) = loaded.first(where: { now - $0.value.last >= Self.settleQuiet }) {
                pending[table] = nil
                return table
            }
            if let next = loaded.map({ $0.value.last + Self.settleQuiet }).min() {
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.01, next - now)))
            } else {
                condition.wait()
            }
        }
    }

    /// Tables analyzed or skipped since start.
    var finishedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return finished
    }

    private func run() {
        var db: PGConnection?
        while true {
            condition.lock()
            let table = nextTable()
            condition.unlock()
            var settled = true
            do {
                if db == nil {
                    let connection = try PGConnection(url: url)
                    try connection.execute("SET lock_timeout = '\(Self.lockTimeout)'; SET statement_timeout = '\(Self.statementTimeout)'")
                    db = connection
                }
                // Table names are built from numbers only (`CollectionLayout.table`).
                try db?.execute("VACUUM (ANALYZE, SKIP_LOCKED) \(table)")
                // Its geo indexes' points tables (`PostgresGeoPoints`): a box's walk is an index-only scan of each.
                let points = try db?.query("SELECT c.relname::text FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE $1::text",
                                           [.text(table + "\\_g%\\_p")]) { $0.text(0) ?? "" } ?? []
                for name in points where name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                    try db?.execute("VACUUM (ANALYZE, SKIP_LOCKED) \(name)")
                }
                let pages = try db?.first("SELECT relpages::bigint, relallvisible::bigint FROM pg_class WHERE relname = $1::text AND relkind = 'r'",
                                          [.text(table)]) { ($0.int(0) ?? 0, $0.int(1) ?? 0) }
                settled = pages.map { $0.1 >= $0.0 } ?? true
                logger.debug("analyzed", metadata: ["table": "\(table)", "all_visible": "\(settled)"])
            } catch {
                db = nil  // a broken connection is opened again for the next table
                logger.warning("ANALYZE failed", metadata: ["table": "\(table)", "error": "\(error)"])
            }
            condition.lock()
            finished += 1
            if !settled && pending[table] == nil && !waiting.contains(table), retries[table, default: 0] < Self.settleRetries {
                retries[table, default: 0] += 1
                pending[table] = (Self.settleCreates, Self.settleCreates, Self.seconds())  // another quiet pass after settleQuiet
            } else if settled {
                retries[table] = nil
            }
            condition.unlock()
        }
    }
}
