import Foundation
import Store
import StoreSQLite

/// `PRAGMA integrity_check` of a finished database copy, run on a thread of
/// its own at the backup's lowered priority while the backup thread links
/// files and hashes the copy (all three only read it).
final class IntegrityCheckInBackground: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: Result<[String], any Error>?

    init(_ path: String, nice: Int32) {
        let thread = Thread { [self] in
            let r = BackupPriority.lowered(nice: nice) { Result { try SQLiteBackup.integrityCheck(path) } }
            lock.withLock { result = r }
            done.signal()
        }
        thread.name = "backup-check"
        thread.start()
    }

    /// Waits for the check (at once when it already ended); its result.
    @discardableResult
    func wait() -> Result<[String], any Error> {
        if let r = lock.withLock({ result }) { return r }
        done.wait()
        return lock.withLock { result! }
    }
}
