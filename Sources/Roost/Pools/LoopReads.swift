import Daemon
import Files
import Foundation
import Jobs
import Logging
import Metrics
import Store
import StoreSQLite
import Synchronization

/// Short reads an event loop answers itself (`loop_reads`, SQLite only).
///
/// A GET by id costs a B-tree descent of a few pages: tens of microseconds
/// while the pages are in memory, less than handing the request to a reader
/// and back, which wakes two threads. So while the whole database file and
/// its WAL are in the kernel's page cache (checked every half second with
/// `cachestat`, or `mincore`), the loop runs such a read on a read-only
/// connection of its own, opened on its first one. The loop still never
/// waits: that connection has no busy wait, and any database error (a lock,
/// a page the kernel dropped meanwhile is only slower) sends the read to the
/// readers as before. A database larger than memory is never read on a loop.
final class LoopReads: @unchecked Sendable {
    private let engine: SQLiteEngine
    private let mmapBytes: Int
    /// One connection per loop, by loop index; each slot is touched only by its own loop's thread.
    private var connections: [(any DocumentReading)?]
    private let resident = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let logger: Logger
    private let served = Counter(label: MetricName.loopReads.name, dimensions: [("outcome", "served")])
    private let handedOn = Counter(label: MetricName.loopReads.name, dimensions: [("outcome", "handed_on")])

    /// nil unless `loop_reads` is on and the engine is SQLite.
    init?(engine: any StoreEngine, config: RoostConfig, logger: Logger) {
        guard config.loopReads, let sqlite = engine as? SQLiteEngine else { return nil }
        self.engine = sqlite
        self.mmapBytes = config.sqliteMmapBytes
        self.connections = Array(repeating: nil, count: max(1, config.loops))
        self.logger = logger
    }

    /// Starts the residency check (a background thread, every half second).
    func start() {
        checkResidency()
        NamedThread.start("loop-reads", background: true) { [self] in
            while !stopped.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.5)
                checkResidency()
            }
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Loop `index`'s connection when a short read may run there now, else nil. On that loop's thread.
    func reader(loop index: Int) -> (any DocumentReading)? {
        guard index < connections.count, resident.load(ordering: .relaxed) else { return nil }
        if let reader = connections[index] { return reader }
        do {
            let reader = try engine.openReader(role: "loop")
            try reader.limitPageCache(bytes: Self.pageCacheBytes)
            try reader.mapFile(bytes: mmapBytes)
            connections[index] = reader
            return reader
        } catch {
            logger.warning("a loop cannot open its own reader; its reads go to the readers", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// A read ran on the loop.
    func didServe() { served.increment() }

    /// A read began on the loop and was handed to the readers (a database error).
    func didHandOn() { handedOn.increment() }

    /// The loops' connections read through the map and the kernel's cache: a small page cache of their own.
    static let pageCacheBytes = 256 * 1024

    private func checkResidency() {
        let now = Self.isResident(engine.path) && Self.isResident(engine.path + "-wal")
        if now != resident.load(ordering: .relaxed) {
            resident.store(now, ordering: .relaxed)
            logger.debug("loop reads", metadata: ["database_resident": "\(now)"])
        }
    }

    /// True when every page of the file is in the page cache (a missing or empty file is).
    static func isResident(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return info.st_size == 0 || FileSegment.isResident(fd, offset: 0, count: Int(info.st_size))
    }
}
