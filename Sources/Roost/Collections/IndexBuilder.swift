import Foundation
import Jobs
import Logging
import Metrics
import Store

/// Builds and drops the indexes of collections set up at run time, in the
/// background (docs/COLLECTIONS.md). On SQLite each step is a writer job
/// that fills `rowsPerStep` documents (a few milliseconds), and the thread
/// rests twice as long as a step took before the next, so writes keep two
/// thirds of the writer; on PostgreSQL a step runs on a connection of its own
/// with `CREATE INDEX CONCURRENTLY`, which never blocks writes. After a
/// step that changed what reads may use, every connection reads its
/// layouts again (`CatalogGeneration`).
final class IndexBuilder: Sendable {
    static let rowsPerStep = 1000
    let pools: StorePools
    let settings: ReloadableSettings
    /// Seconds a dropped index stays for reads that began before (the longest a read may run, and one more).
    let dropGrace: Double
    let logger: Logger
    private let stopped = LockedBox(false)
    private let wanted = LockedBox(true)
    /// Each collection's indexes as the last step saw them.
    private let progress = LockedBox<[String: IndexBuildProgress]>([:])
    /// Collections set up at run time this process has seen, so a dropped one's indexes go too.
    private let seen = LockedBox<Set<String>>([])
    private let metrics = RoostMetrics.indexBuilds()

    init(pools: StorePools, settings: ReloadableSettings, dropGrace: Double, logger: Logger) {
        self.pools = pools
        self.settings = settings
        self.dropGrace = dropGrace
        self.logger = logger
    }

    /// Where `collection`'s indexes stand (nil: none built here since start).
    func state(of collection: String) -> IndexBuildProgress? { progress.get()[collection] }

    func start() {
        NamedThread.start("index-builder") { [self] in
            var connection: (any DocumentWriting)?
            while !stopped.get() {
                wanted.set(false)
                let unfinished = pass(&connection)
                var waited = 0.0
                let pause = unfinished ? 1.0 : 30.0
                while waited < pause && !stopped.get() && !wanted.get() { Thread.sleep(forTimeInterval: 0.05); waited += 0.05 }
            }
        }
    }

    /// Settings changed: look now.
    func kick() { wanted.set(true) }

    func stop() { stopped.set(true) }

    /// Steps every collection whose indexes differ from its settings until
    /// each is done or waits (another node builds, or a drop's grace runs).
    /// - Returns: whether any is left unfinished.
    private func pass(_ connection: inout (any DocumentWriting)?) -> Bool {
        let runtime = settings.snapshot.runtime
        seen.set(seen.get().union(runtime.keys))
        var targets = runtime.mapValues { Set($0.collection.indexes) }
        for name in seen.get() where runtime[name] == nil && !settings.snapshot.managedByConfig.contains(name) { targets[name] = [] }
        var unfinished = false
        for (name, specs) in targets.sorted(by: { $0.key < $1.key }) {
            while !stopped.get() {
                let started = DispatchTime.now().uptimeNanoseconds
                guard let step = step(name, specs, &connection) else { unfinished = true; break }
                let before = progress.get()[name]
                progress.set(progress.get().merging([name: step]) { _, new in new })
                if step.changedLayout || before.map({ $0.entries.map(\.spec) != step.entries.map(\.spec) }) == true {
                    CatalogGeneration.bump()
                }
                let running = progress.get().values.reduce(0) { $0 + $1.entries.filter { $0.state != .ready }.count }
                metrics.running.record(running)
                if step.finished { break }
                if !step.entries.contains(where: { $0.state == .building }) { unfinished = true; break }  // a drop's grace, or another node
                metrics.rows.increment(by: Self.rowsPerStep)
                // Rest twice as long as the step took: writes keep two thirds of the writer.
                let took = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                Thread.sleep(forTimeInterval: min(2 * took, 0.5))
            }
        }
        return unfinished
    }

    private func step(_ name: String, _ specs: Set<IndexSpec>, _ connection: inout (any DocumentWriting)?) -> IndexBuildProgress? {
        let (rows, grace) = (Self.rowsPerStep, dropGrace)
        let result: Result<IndexBuildProgress, any Error>?
        if pools.engine.isEmbedded {
            result = pools.onWriter { writer in try writer.buildIndexesStep(specs, on: name, rows: rows, dropGrace: grace) }
        } else {
            // PostgreSQL: a connection of this thread's own, never the writer's (`CREATE INDEX CONCURRENTLY`).
            result = Result {
                if connection == nil { connection = try pools.engine.openWriter(ids: DocumentID(), logger: logger) }
                return try connection!.buildIndexesStep(specs, on: name, rows: rows, dropGrace: grace)
            }
            if case .failure = result { connection = nil }
        }
        switch result {
        case .success(let step)?: return step
        case .failure(let error)?:
            logger.warning("index build step failed; trying again shortly", metadata: ["collection": "\(name)", "error": "\(error)"])
            return nil
        case nil: return nil  // the writer's queue was full
        }
    }
}
