#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread for the kernel, so `top -H`, `ps -L` and `perf`
/// show `writer-0` or `reader-3` instead of the process name. Foundation's
/// `Thread.name` does not reach the kernel on Linux, and Swift cannot call
/// the variadic `prctl`, so this writes `/proc/thread-self/comm` (Linux 3.17+).
public enum ThreadName {
    /// Sets the calling thread's name, cut to the kernel's 15 bytes. Best effort.
    public static func set(_ name: String) {
        #if canImport(Glibc)
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #endif
    }
}
