import Foundation

/// Starts the daemon's threads, each named for the kernel, so `top -H`,
/// `ps -L` and `perf` show `writer-0` or `reader-3` instead of the process
/// name. Foundation's `Thread.name` does not reach the kernel on Linux, and
/// Swift cannot call the variadic `prctl`, so the new thread writes its name
/// to `/proc/thread-self/comm` (Linux 3.17+) before running `body`.
public enum NamedThread {
    /// The nice value of background threads: when the cores are busy, the loops,
    /// readers and writer that answer requests run first.
    public static let backgroundNice: Int32 = 10

    /// Runs `body` on a new thread called `name` (cut to the kernel's 15 bytes).
    /// - Parameter stackSize: bytes of stack (virtual memory); nil keeps the default.
    /// - Parameter background: work no request waits for (sending mail, sweeps): the
    ///   thread runs at nice `backgroundNice` (on Linux a thread's own attribute).
    public static func start(_ name: String, stackSize: Int? = nil, background: Bool = false,
                             _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            if background { lowerCurrentThreadPriority() }
            body()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Best effort: raising one's own nice value needs no privilege; a failure leaves it as it was.
    static func lowerCurrentThreadPriority() {
        guard let tid = currentThreadID() else { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, backgroundNice)
    }

    /// The kernel's id of the calling thread: `/proc/thread-self` links to `<pid>/task/<tid>`
    /// (Swift sees neither `gettid` nor the variadic `syscall`).
    static func currentThreadID() -> id_t? {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return link.split(separator: "/").last.flatMap { id_t($0) }
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
