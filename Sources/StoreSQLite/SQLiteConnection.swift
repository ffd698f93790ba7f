import CSQLite
import CSQLiteNoWait
import Foundation
import Store

/// One SQLite connection, confined to the thread that uses it.
///
/// Statements are prepared once and cached by their SQL text. Every value
/// from outside is bound as a parameter; SQL text is only ever built from
/// fixed fragments and numeric table ids.
public final class SQLiteConnection {
    let handle: OpaquePointer
    private var cache: [String: SQLiteStatement] = [:]
    private static let cacheLimit = 512
    /// Page-cache bytes this connection last added to `SQLiteMemory.pageCacheBytes`.
    private var reportedCacheBytes = 0
    /// SQLite's process-wide configuration, applied once before the first open.
    private static let configured: Int32 = roost_sqlite_configure()

    /// Opens (creating if needed) the database at `path` in WAL mode.
    /// - Parameters:
    ///   - readOnly: open a query-only connection, for reader threads.
    ///   - synchronous: `NORMAL` survives a process crash; `FULL` also a power cut.
    ///   - neverWaits: for an event loop's reads: a lock another connection
    ///     holds answers `SQLITE_BUSY` at once (no retries), and a page that is
    ///     not in the kernel's page cache fails the read at once
    ///     (`SQLITE_IOERR_READ`, the "roost-nowait" VFS) instead of waiting for the disk.
    public init(path: String, readOnly: Bool = false, synchronous: String = "NORMAL", neverWaits: Bool = false) throws {
        _ = Self.configured
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX
        if neverWaits {
            let registered = roost_nowait_vfs_register()
            guard registered == SQLITE_OK else { throw SQLiteError(code: registered, message: "cannot register the roost-nowait VFS") }
        }
        let rc = sqlite3_open_v2(path, &db, flags, neverWaits ? roost_nowait_vfs_name : nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        // A lock held by another connection (the checkpointer restarting the
        // WAL, above all) is retried every millisecond for up to 5 s. SQLite's
        // own busy timeout backs off to 100 ms sleeps, which would keep every
        // queued write waiting long after the lock is free.
        if !neverWaits {
            sqlite3_busy_handler(db, { _, attempts in
                guard attempts < 5000 else { return 0 }
                usleep(1000)
                return 1
            }, nil)
        }
        RegexFunction.register(on: db)
        if !readOnly {
            try exec("PRAGMA journal_mode=WAL")
            try exec("PRAGMA synchronous=\(synchronous == "FULL" ? "FULL" : "NORMAL")")
            try exec("PRAGMA foreign_keys=ON")
        } else {
            try exec("PRAGMA query_only=1")
        }
        try limitPageCache(bytes: SQLiteMemory.lookupCacheBytes)
        try exec("PRAGMA temp_store=MEMORY")
    }

    deinit {
        cache.removeAll()
        SQLiteMemory.record(change: -reportedCacheBytes)
        sqlite3_close_v2(handle)
    }

    /// Caps the page cache at `bytes` (SQLite rounds to whole pages).
    public func limitPageCache(bytes: Int) throws {
        try exec("PRAGMA cache_size=-\(max(1, bytes >> 10))")
    }

    /// Maps up to `bytes` of the database file (`PRAGMA mmap_size`; SQLite caps
    /// it at its compile-time limit, 2 GiB by default): reads use the kernel's
    /// page cache in place. Those pages are file-backed, shared and
    /// reclaimable; they show in RSS as `RssFile` once touched.
    public func mapFile(bytes: Int) throws {
        try exec("PRAGMA mmap_size=\(max(0, bytes))")
    }

    /// Brings this connection's share of `SQLiteMemory.pageCacheBytes` up to
    /// date. Called as each statement is prepared: a cheap count, no walk.
    private func reportCacheUse() {
        var current: Int32 = 0, highest: Int32 = 0
        guard sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0) == SQLITE_OK else { return }
        SQLiteMemory.record(change: Int(current) - reportedCacheBytes)
        reportedCacheBytes = Int(current)
    }

    func lastError(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs one or more statements with no parameters (schema and pragmas only).
    public func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? "error"
            sqlite3_free(err)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message)
        }
    }

    /// A cached prepared statement for `sql`.
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        reportCacheUse()
        if let s = cache[sql] { return s }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw lastError(rc) }
        let statement = SQLiteStatement(handle: stmt, connection: self)
        if cache.count >= Self.cacheLimit { cache.removeAll() }
        cache[sql] = statement
        return statement
    }

    /// Runs `body` in a transaction; rolls back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try exec("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a read transaction: every statement sees one snapshot.
    /// Nested calls join the outer transaction. BEGIN and COMMIT are cached
    /// statements: every list runs one of these.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        guard sqlite3_get_autocommit(handle) != 0 else { return try body() }
        try prepare("BEGIN").run()
        defer { try? prepare("COMMIT").run() }
        return try body()
    }

    /// Whether a transaction is open on this connection (a writer job runs inside one).
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` inside a savepoint: a failure undoes only its own writes.
    /// The savepoint statements are prepared once: group commit runs one per write.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        try prepare("SAVEPOINT op").run()
        do {
            let result = try body()
            try prepare("RELEASE op").run()
            return result
        } catch {
            try? prepare("ROLLBACK TO op").run()
            try? prepare("RELEASE op").run()
            throw error
        }
    }

    /// When set, statements stop with `SQLITE_INTERRUPT` once this time passes.
    private var deadline: UInt64 = 0

    /// Runs `body` with a time budget: SQLite's progress handler interrupts
    /// any statement still running after `seconds`, so no query can pin a
    /// worker thread forever.
    public func withTimeLimit<T>(_ seconds: Double, _ body: () throws -> T) throws -> T {
        deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        sqlite3_progress_handler(handle, 4000, { ctx in
            let connection = Unmanaged<SQLiteConnection>.fromOpaque(ctx!).takeUnretainedValue()
            return DispatchTime.now().uptimeNanoseconds > connection.deadline ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
        defer { sqlite3_progress_handler(handle, 0, nil, nil) }
        return try body()
    }

    public var changes: Int { Int(sqlite3_changes(handle)) }
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}
