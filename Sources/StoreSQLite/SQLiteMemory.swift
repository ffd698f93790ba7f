import Synchronization
import Store

/// SQLite's page caches: how a budget is split among connections, and how
/// much all of them hold.
///
/// Every connection opens with a small cache (`lookupCacheBytes`), enough for
/// the few pages of a credential or file look-up. The writer and the readers,
/// which walk large tables and indexes, get their share of the operator's
/// `sqlite_cache_bytes` through `limitPageCache(bytes:)`. SQLite fills a cache
/// only as pages are read, so an idle daemon holds far less than the budget.
public enum SQLiteMemory {
    /// The page cache every connection opens with.
    public static let lookupCacheBytes = 128 << 10

    /// The writer's share and each reader's share of `budget` bytes: a quarter
    /// for the writer, the rest split evenly among `readers` connections.
    public static func split(budget: Int, readers: Int) -> (writer: Int, reader: Int) {
        let writer = budget / 4
        return (writer, (budget - writer) / max(1, readers))
    }

    /// Bytes of page cache all open connections hold, as of each one's latest statement.
    public static var pageCacheBytes: Int { held.load(ordering: .relaxed) }

    private static let held = Atomic<Int>(0)

    /// Adds a connection's change in cache use to the total.
    static func record(change: Int) {
        if change != 0 { held.add(change, ordering: .relaxed) }
    }
}

extension DocumentReader {
    /// Caps this reader's page cache at `bytes` (call on its own thread).
    public func limitPageCache(bytes: Int) throws { try db.limitPageCache(bytes: bytes) }
    /// Maps up to `bytes` of the database file for this reader (call on its own thread).
    public func mapFile(bytes: Int) throws { try db.mapFile(bytes: bytes) }
}

extension DocumentWriter {
    /// Caps the writer's page cache at `bytes` (call on its own thread).
    public func limitPageCache(bytes: Int) throws { try db.limitPageCache(bytes: bytes) }
}
