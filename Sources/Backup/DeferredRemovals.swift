import Foundation

/// Unlinks the bytes of deleted files, or keeps the paths for later while a
/// backup holds `BackupHold`. Rows go first (their delete has committed), so a
/// crash that forgets the list leaves orphans the start-up sweep removes.
public final class DeferredRemovals: @unchecked Sendable {
    private let hold: BackupHold
    private let lock = NSLock()
    private var pending: [String] = []

    public init(hold: BackupHold) { self.hold = hold }

    /// Removes `paths` (files or directory trees) now, with any kept from
    /// before, unless a backup is running: then they wait for `flush`.
    public func remove(_ paths: [String]) {
        lock.lock()
        pending += paths
        lock.unlock()
        flush()
    }

    /// Removes the kept paths when no backup is running.
    public func flush() {
        lock.lock()
        let paths = pending
        pending.removeAll()
        lock.unlock()
        guard !paths.isEmpty else { return }
        let done = hold.ifNoBackup {
            for path in paths where unlink(path) != 0 && (errno == EISDIR || errno == EPERM) {
                try? FileManager.default.removeItem(atPath: path)
            }
            return true
        }
        if done == nil {
            lock.lock()
            pending = paths + pending
            lock.unlock()
        }
    }

    /// Paths waiting for a backup to finish.
    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return pending.count
    }
}
