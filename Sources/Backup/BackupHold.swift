import Foundation

/// `<data_dir>/backup.hold`: a running backup holds it shared (`flock`)
/// from just before its database snapshot until every file it needs is
/// copied; the daemon tests it (exclusive, never waiting) before it does
/// anything that would take away what a backup may still be copying.
///
/// - A deleted file's bytes are unlinked only when no backup holds it:
///   otherwise a snapshot taken before the delete committed would name a
///   file that is gone (see `DeferredRemovals`).
/// - The checkpointer runs no RESTART checkpoint while a backup holds it:
///   RESTART waits for readers while holding the write lock, and a backup is
///   a long reader, so the writer would wait.
/// - The start-up sweep leaves orphans alone while a backup holds it.
///
/// `flock` locks belong to an open file description, so each side opens its
/// own `BackupHold`; works across processes (`roostd backup` beside the daemon).
public final class BackupHold: @unchecked Sendable {
    public static let fileName = "backup.hold"
    private let fd: Int32
    private let lock = NSLock()

    public init(dataDir: String) throws {
        let path = dataDir + "/" + Self.fileName
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw BackupError("cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Takes the hold shared (backup side), waiting for a daemon that tests it.
    public func acquireShared() throws {
        while flock(fd, LOCK_SH) != 0 {
            guard errno == EINTR else { throw BackupError("cannot lock \(Self.fileName): \(String(cString: strerror(errno)))") }
        }
    }

    /// Releases a shared hold.
    public func release() { flock(fd, LOCK_UN) }

    /// Runs `body` holding the hold exclusively when no backup holds it;
    /// nil, without running it, when one does.
    public func ifNoBackup<T>(_ body: () throws -> T) rethrows -> T? {
        lock.lock()
        defer { lock.unlock() }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// True while some backup (in this process or another) holds it.
    public var isBackupRunning: Bool { ifNoBackup { true } == nil }
}

/// Any backup failure, with its reason for the log and the API.
public struct BackupError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
