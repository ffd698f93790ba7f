import CFileShim
import Foundation

extension FileCopy {
    /// Starts the write-back of a file while it is still being written (by
    /// SQLite), every 64 MiB or so, so that the disk works during the copy
    /// and the final `syncfs` has little left to wait for. Best effort.
    final class Writeback {
        private let path: String
        private var fd: Int32 = -1
        private var calls = 0

        init(path: String) { self.path = path }

        deinit { if fd >= 0 { close(fd) } }

        /// Called after each chunk of the copy (8 MiB): every 8th starts a write-back.
        func start() {
            calls += 1
            guard calls % 8 == 0 else { return }
            if fd < 0 { fd = open(path, O_RDONLY | O_CLOEXEC) }
            if fd >= 0 { _ = roost_start_writeback(fd) }
        }
    }

    /// Drops the file at `path` from the page cache once it is on disk: a
    /// backup's copy should not push the daemon's own pages out. Best effort.
    static func dropCache(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        roost_drop_cache(fd)
        close(fd)
    }
}
