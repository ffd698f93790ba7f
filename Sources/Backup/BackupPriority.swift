import CFileShim

/// Runs a backup at a lower CPU and I/O priority than the daemon's request
/// threads (`SCHED_IDLE`, nice, best-effort I/O level 7), so that on a busy
/// machine the backup takes longer rather than the requests: Linux
/// priorities are per thread, so only the calling thread is lowered, and
/// put back after.
enum BackupPriority {
    /// Runs `body` on this thread at nice `nice` (no change when it is 0 or
    /// the thread is already lower) and the lowest best-effort I/O priority.
    static func lowered<T>(nice: Int32, _ body: () throws -> T) rethrows -> T {
        guard nice > 0 else { return try body() }
        var oldNice: Int32 = 0, oldIO: Int32 = -1
        guard roost_lower_thread_priority(nice, &oldNice, &oldIO) == 0 else { return try body() }
        defer { roost_restore_thread_priority(oldNice, oldIO) }
        return try body()
    }
}
