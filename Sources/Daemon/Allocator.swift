import CJemalloc

/// The process's memory allocator. roostd links jemalloc, which replaces
/// malloc everywhere: requests are built on a loop thread and freed on a
/// worker (and responses the other way round), a pattern glibc's allocator
/// serves with arena locks and consolidation (about a sixth of the loops'
/// CPU in a GET benchmark).
public enum Allocator {
    /// Freed memory goes back to the kernel within a second instead of
    /// jemalloc's ten: a burst of large buffers (log-ins, image decoding)
    /// does not keep the daemon's resident size up for long. Call once at
    /// start-up; false if jemalloc is not the allocator.
    @discardableResult
    public static func returnFreedMemoryPromptly() -> Bool {
        roost_jemalloc_version() != nil && roost_jemalloc_set_decay(1000) == 0
    }

    /// "jemalloc 5.3.0-…", or "system" if jemalloc is not the one answering.
    public static var description: String {
        guard let version = roost_jemalloc_version() else { return "system" }
        return "jemalloc " + String(cString: version)
    }
}
