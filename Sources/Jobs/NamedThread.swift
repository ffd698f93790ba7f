import Foundation

/// Starts the daemon's threads, each named for the kernel, so `top -H`,
/// `ps -L` and `perf` show `writer-0` or `reader-3` instead of the process
/// name. Foundation's `Thread.name` does not reach the kernel on Linux, and
/// Swift cannot call the variadic `prctl`, so the new thread writes its name
/// to `/proc/thread-self/comm` (Linux 3.17+) before running `body`.
public enum NamedThread {
    /// Runs `body` on a new thread called `name` (cut to the kernel's 15 bytes).
    /// - Parameter stackSize: bytes of stack (virtual memory); nil keeps the default.
    public static func start(_ name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            body()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Best effort: a thread without its name still runs.
    static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
