import CFileShim
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

    /// The time slice of the threads that answer requests (the loops and the
    /// readers; not the writer, whose long jobs a woken reader must cut into):
    /// the kernel's shortest, 0.1 ms. With EEVDF (Linux
    /// 6.12+) a woken thread whose slice is shorter than the running thread's
    /// takes the CPU at once; with the default slice it may wait for the
    /// running one's slice to end, which this kernel notices only at its next
    /// tick (up to 4 ms at 250 Hz). Measured (`docs/PUSH.md`, Short slices): a thread
    /// woken every millisecond beside a CPU hog waited up to 3.9 ms at the
    /// default slice, at most 0.13 ms at 0.1 ms. The slice changes no thread's
    /// share of the CPU (nice does that), only when a woken one gets it.
    public static let requestSliceNanoseconds: UInt64 = 100_000

    /// Runs `body` on a new thread called `name` (cut to the kernel's 15 bytes).
    /// - Parameter stackSize: bytes of stack (virtual memory); nil keeps the default.
    /// - Parameter background: work no request waits for (sending mail, sweeps): the
    ///   thread runs at nice `backgroundNice` (on Linux a thread's own attribute).
    /// - Parameter answersRequests: a thread a request waits on each time it wakes
    ///   (a loop, a reader): it gets the short slice `requestSliceNanoseconds`. Every
    ///   other thread sets the kernel's default: a new thread inherits its creator's
    ///   slice, and a loop or reader may start one (a reload, a lazily started worker).
    public static func start(_ name: String, stackSize: Int? = nil, background: Bool = false, answersRequests: Bool = false,
                             _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            if background { lowerCurrentThreadPriority() }
            _ = roost_set_thread_slice(answersRequests ? requestSliceNanoseconds : 0)
            body()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Gives the calling thread the short slice of the threads that answer requests
    /// (`requestSliceNanoseconds`): for one not started here, the main thread's loop.
    /// Best effort: a kernel before 6.12 ignores it.
    public static func takeRequestSlice() {
        _ = roost_set_thread_slice(requestSliceNanoseconds)
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
