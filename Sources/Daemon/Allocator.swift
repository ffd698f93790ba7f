import CJemalloc

/// The process's memory allocator. roostd links jemalloc, which replaces
/// malloc everywhere: requests are built on a loop thread and freed on a
/// worker (and responses the other way round), a pattern glibc's allocator
/// serves with arena locks and consolidation (about a sixth of the loops'
/// CPU in a GET benchmark). Its options are set in `roost_jemalloc.c`.
public enum Allocator {
    /// "jemalloc 5.3.0-…", or "system" if jemalloc is not the one answering.
    public static var description: String {
        guard let version = roost_jemalloc_version() else { return "system" }
        return "jemalloc " + String(cString: version)
    }

    /// How long freed pages are kept before they go back to the kernel, in
    /// milliseconds; nil when jemalloc is not the allocator.
    public static var decayMilliseconds: Int? {
        let value = roost_jemalloc_dirty_decay_ms()
        return value == -2 ? nil : value
    }

    /// jemalloc's totals in bytes, refreshed on each call; nil when jemalloc
    /// is not the allocator. `resident` includes freed pages not yet returned.
    public static var stats: (allocated: Int, resident: Int, metadata: Int, mapped: Int)? {
        var allocated = 0, resident = 0, metadata = 0, mapped = 0
        guard roost_jemalloc_stats(&allocated, &resident, &metadata, &mapped) == 0 else { return nil }
        return (allocated, resident, metadata, mapped)
    }
}
