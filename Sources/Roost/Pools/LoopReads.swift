import Daemon
import EventLoop
import Logging
import Metrics
import Store
import StoreSQLite
import Timing

/// Short reads an event loop answers itself (`loop_reads`, SQLite only).
///
/// A GET by id costs a B-tree descent of a few pages: a few microseconds
/// when they are in memory, less than handing the request to a reader and
/// back, which wakes two threads. So each loop runs such reads on a
/// read-only connection of its own (opened at its first one) that can never
/// make it wait: no busy wait on a lock, no memory map, and every page read
/// from the kernel's page cache with `RWF_NOWAIT` (SQLite's "roost-nowait"
/// VFS). A read that would wait (a page not in memory, a lock) fails at once
/// and goes to the readers as before, which bring the page in. A database
/// far larger than memory therefore serves its hot documents on the loops
/// and its cold ones on the readers.
final class LoopReads: @unchecked Sendable {
    private let engine: SQLiteEngine
    /// One connection per loop, by loop index; each slot (here and below) is
    /// touched only by its own loop's thread.
    private var connections: [DocumentReader?]
    /// Each loop's reads of one turn share one read transaction (`DocumentReader.beginSnapshot`),
    /// ended at the loop's next turn; a count per loop names the one open.
    private var snapshots: [UInt64]
    private var snapshotOpen: [Bool]
    /// When each loop may try again to open its connection (opening reads the
    /// header, which may not be in memory either), in monotonic nanoseconds.
    private var retryAt: [UInt64]
    private let logger: Logger
    private let served = Counter(label: MetricName.loopReads.name, dimensions: [("outcome", "served")])
    private let handedOn = Counter(label: MetricName.loopReads.name, dimensions: [("outcome", "handed_on")])

    /// Each loop connection's page cache: a reader's share of `sqlite_cache_bytes`.
    private let pageCacheBytes: Int

    /// nil unless `loop_reads` is on and the engine is SQLite.
    init?(engine: any StoreEngine, config: RoostConfig, pageCacheBytes: Int, logger: Logger) {
        guard config.loopReads, let sqlite = engine as? SQLiteEngine else { return nil }
        self.engine = sqlite
        self.pageCacheBytes = pageCacheBytes
        self.connections = Array(repeating: nil, count: max(1, config.loops))
        self.retryAt = Array(repeating: 0, count: max(1, config.loops))
        self.snapshots = Array(repeating: 0, count: max(1, config.loops))
        self.snapshotOpen = Array(repeating: false, count: max(1, config.loops))
        self.logger = logger
    }

    /// `loop`'s connection, nil when it has none now (its read goes to the
    /// readers, counted as handed on), inside the turn's read transaction.
    /// On that loop's thread.
    func reader(on loop: EventLoop) -> (any DocumentReading)? {
        let index = loop.index
        guard index < connections.count, let reader = connection(index) else { return nil }
        if !snapshotOpen[index] {
            do { try reader.beginSnapshot() } catch { return reader }
            snapshotOpen[index] = true
            snapshots[index] &+= 1
            let snapshot = snapshots[index]
            loop.nextTurn { [self] in
                guard snapshots[index] == snapshot, snapshotOpen[index] else { return }
                endSnapshot(index)
            }
        }
        return reader
    }

    /// Ends loop `index`'s read transaction now (after a read that failed in it).
    func endSnapshot(_ index: Int) {
        guard index < connections.count, snapshotOpen[index] else { return }
        connections[index]?.endSnapshot()
        snapshotOpen[index] = false
    }

    private func connection(_ index: Int) -> DocumentReader? {
        if let reader = connections[index] { return reader }
        let now = monotonicNanoseconds()
        guard now >= retryAt[index] else { return nil }
        do {
            guard let reader = try engine.openReader(role: "loop") as? DocumentReader else { return nil }
            try reader.limitPageCache(bytes: pageCacheBytes)
            connections[index] = reader
            return reader
        } catch {
            retryAt[index] = now + 1_000_000_000
            handedOn.increment()
            logger.debug("a loop could not open its own reader yet; its reads go to the readers", metadata: ["loop": "\(index)", "error": "\(error)"])
            return nil
        }
    }

    /// A read ran on the loop.
    func didServe() { served.increment() }

    /// A read began on the loop and was handed to the readers (it would have waited).
    func didHandOn() { handedOn.increment() }
}
