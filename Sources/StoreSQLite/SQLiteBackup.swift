import CSQLite
import Foundation
import Store

/// An online copy of a live WAL database through SQLite's backup API.
///
/// A read transaction is opened on a connection of its own and held for the
/// whole copy, so every `sqlite3_backup_step` chunk reads the same snapshot
/// (without it, a commit by the writer between two chunks would restart the
/// copy, and under a steady load it would never finish). In WAL mode a reader
/// never blocks the writer; the one thing that could make the writer wait is
/// a checkpoint in RESTART mode waiting for this reader, which is why the
/// caller holds `BackupHold` (the checkpointer then runs PASSIVE only).
///
/// The copy is left in rollback-journal mode (a plain standalone file that
/// opens read-only anywhere); `roostd` switches it back to WAL when it serves it.
public enum SQLiteBackup {
    /// What one copy did.
    public struct Outcome: Sendable {
        public let pages: Int
        public let bytes: Int
    }

    /// Copies the database at `source` to the new file `destination`.
    /// - Parameters:
    ///   - pagesPerStep: pages copied per `sqlite3_backup_step` chunk.
    ///   - snapshotTaken: called once the read snapshot is fixed, before any page is copied.
    ///   - progress: called after each chunk with the bytes it copied (for
    ///     pacing); false stops the copy, which then throws.
    public static func copy(from source: String, to destination: String, pagesPerStep: Int32 = 2048,
                            snapshotTaken: () -> Void = {}, progress: (Int) -> Bool = { _ in true }) throws -> Outcome {
        guard FileManager.default.fileExists(atPath: source) else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "no database at \(source)")
        }
        // Read-write only so that a WAL database opens whether or not its
        // -wal and -shm files exist (a stopped daemon); nothing is written.
        let reader = try SQLiteConnection(path: source)
        // BEGIN is deferred: the first read fixes the snapshot.
        try reader.exec("BEGIN")
        defer { try? reader.exec("COMMIT") }
        _ = try reader.prepare("SELECT count(*) FROM sqlite_schema").firstRow { $0.int(0) }
        snapshotTaken()
        let pageSize = Int(try reader.prepare("PRAGMA page_size").firstRow { $0.int(0) } ?? 4096)

        var dest: OpaquePointer?
        guard sqlite3_open_v2(destination, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let dest else {
            let message = dest.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(destination)"
            if let dest { sqlite3_close_v2(dest) }
            throw SQLiteError(code: SQLITE_CANTOPEN, message: message)
        }
        defer { sqlite3_close_v2(dest) }
        // The copy is fsynced as a whole once it is complete.
        sqlite3_exec(dest, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", nil, nil, nil)
        guard let backup = sqlite3_backup_init(dest, "main", reader.handle, "main") else {
            throw SQLiteError(code: sqlite3_errcode(dest), message: String(cString: sqlite3_errmsg(dest)))
        }
        var rc: Int32 = SQLITE_OK
        var copied: Int32 = 0
        while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED {
            rc = sqlite3_backup_step(backup, pagesPerStep)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(1000); continue }
            let done = sqlite3_backup_pagecount(backup) - sqlite3_backup_remaining(backup)
            defer { copied = done }
            if !progress(Int(done - copied) * pageSize) { rc = SQLITE_INTERRUPT; break }
        }
        let pages = Int(sqlite3_backup_pagecount(backup))
        let finished = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finished == SQLITE_OK else {
            throw SQLiteError(code: rc == SQLITE_DONE ? finished : rc, message: "backup of \(source) failed: \(String(cString: sqlite3_errstr(rc)))")
        }
        return Outcome(pages: pages, bytes: pages * pageSize)
    }

    /// Turns the copy at `path` into a standalone rollback-journal database
    /// (the copy's header still says WAL, as its source's did).
    public static func makeStandalone(_ path: String) throws {
        let db = try SQLiteConnection(path: path, readOnly: false)
        try db.exec("PRAGMA journal_mode=DELETE")
    }

    /// `PRAGMA integrity_check` on the database at `path`, opened read-only:
    /// `["ok"]` when it is sound, else SQLite's list of problems.
    public static func integrityCheck(_ path: String) throws -> [String] {
        let db = try SQLiteConnection(path: path, readOnly: true)
        // Pages through a memory map (up to the 2 GB Debian's SQLite allows)
        // rather than a read(2) and a copy each:
        // nothing else writes the file while it is checked.
        try db.exec("PRAGMA mmap_size = 2147418112")
        return try db.prepare("PRAGMA integrity_check").rows { $0.text(0) }
    }
}
