import CJemalloc

/// The process's memory allocator. roostd links jemalloc, which replaces
/// malloc everywhere: requests are built on a loop thread and freed on a
/// worker (and responses the other way round), a pattern glibc's allocator
/// serves with arena locks and consolidation (about a sixth of the loops'
/// CPU in a GET benchmark).
public enum Allocator {
    /// "jemalloc 5.3.0-…", or "system" if jemalloc is not the one answering.
    public static var description: String {
        guard let version = roost_jemalloc_version() else { return "system" }
        return "jemalloc " + String(cString: version)
    }
}
