import Foundation

/// An exclusive `flock` on `<data_dir>/roostd.lock`, held for the daemon's
/// life, so two daemons never share one data directory.
final class DataDirectoryLock {
    private let fd: Int32

    struct Held: Error, CustomStringConvertible {
        let path: String
        var description: String { "another roostd is already using \(path) (the lock file is held)" }
    }

    init(directory: String) throws {
        let path = directory + "/roostd.lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw RoostConfig.Invalid("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw Held(path: directory)
        }
        let pid = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
