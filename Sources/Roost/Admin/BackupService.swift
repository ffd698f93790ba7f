import Backup
import Daemon
import Foundation
import Jobs
import Logging

/// The daemon's backups: every `backups.every` and on `POST /admin/backups`,
/// one at a time on the `backup` thread (never on an event loop).
///
/// The thread also retries unlinks of deleted files that waited for a
/// backup (`DeferredRemovals`), every few seconds. A failed scheduled
/// backup is logged at error level with its reason and retried sooner than
/// the schedule.
final class BackupService: @unchecked Sendable {
    typealias Completion = @Sendable (Result<BackupTaker.Outcome, any Error>) -> Void

    let settings: RoostConfig.Backups
    let dataDir: String
    /// `s3://bucket/prefix/` when files live in S3: backups index them instead of copying.
    var objectStore: String?
    let removals: DeferredRemovals
    let logger: Logger
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var waiters: [Completion] = []
    private var requested = false
    private var running = false
    private var stopped = false
    private var due: Date?
    private let finished = DispatchSemaphore(value: 0)
    private let gauges = RoostMetrics.backupGauges()

    /// How often the thread wakes to retry kept unlinks.
    static let tick: TimeInterval = 5

    init(settings: RoostConfig.Backups, dataDir: String, removals: DeferredRemovals, logger: Logger) {
        self.settings = settings
        self.dataDir = dataDir
        self.removals = removals
        self.logger = logger
    }

    var catalog: BackupCatalog? { settings.dir.map { BackupCatalog(root: $0) } }

    func start() {
        if let every = settings.every, let catalog, embeddedDatabase {
            // The next one is due `every` after the newest (never before a minute has passed here).
            let newest = catalog.completeNames().last.flatMap {
                (try? FileManager.default.attributesOfItem(atPath: catalog.root + "/" + $0))?[.modificationDate] as? Date
            }
            due = max(newest.map { $0.addingTimeInterval(TimeInterval(every)) } ?? .distantPast,
                      Date().addingTimeInterval(TimeInterval(min(every, 60))))
        }
        NamedThread.start("backup", background: true) { [self] in
            defer { finished.signal() }
            loop()
        }
    }

    /// Stops the thread; a running backup is cancelled (it leaves nothing complete).
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
        removals.flush()
    }

    enum Refusal: Error {
        case notConfigured, running, externalDatabase
    }

    /// False when the data live in PostgreSQL (`database_url`): roostd backs
    /// up only its own SQLite file and file store.
    var embeddedDatabase = true

    /// Asks for a backup now; `completion` runs on the backup thread when it ends.
    func requestNow(_ completion: Completion?) throws {
        guard embeddedDatabase else { throw Refusal.externalDatabase }
        guard settings.dir != nil else { throw Refusal.notConfigured }
        condition.lock()
        defer { condition.unlock() }
        guard !running && !requested else { throw Refusal.running }
        requested = true
        if let completion { waiters.append(completion) }
        condition.broadcast()
    }

    /// True while a backup runs or is about to.
    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running || requested
    }

    private func loop() {
        while true {
            condition.lock()
            let wake = min(due ?? .distantFuture, Date().addingTimeInterval(Self.tick))
            while !stopped && !requested && Date() < wake { _ = condition.wait(until: wake) }
            if stopped { condition.unlock(); return }
            let scheduled = !requested && (due.map { Date() >= $0 } ?? false)
            let go = requested || scheduled
            if go { running = true; requested = false }
            let waiting = go ? waiters : []
            if go { waiters.removeAll() }
            condition.unlock()
            removals.flush()
            guard go else { continue }
            let result = Result { try runOne() }
            condition.lock()
            running = false
            if let every = settings.every {
                let failed = (try? result.get()) == nil
                due = Date().addingTimeInterval(TimeInterval(failed ? min(every, 900) : every))
            }
            condition.unlock()
            removals.flush()
            record(result, scheduled: scheduled)
            for w in waiting { w(result) }
        }
    }

    private func runOne() throws -> BackupTaker.Outcome {
        guard let catalog else { throw Refusal.notConfigured }
        var taker = BackupTaker(dataDir: dataDir, catalog: catalog)
        taker.keep = settings.keep
        taker.maxRate = settings.maxRate
        taker.objectStore = objectStore
        taker.isCancelled = { [self] in
            condition.lock()
            defer { condition.unlock() }
            return stopped
        }
        return try taker.take()
    }

    private func record(_ result: Result<BackupTaker.Outcome, any Error>, scheduled: Bool) {
        switch result {
        case .success(let o):
            gauges.lastSuccess.record(Date().timeIntervalSince1970)
            gauges.duration.record(o.seconds)
            gauges.size.record(Double(o.manifest.totalBytes))
            RoostMetrics.backups(outcome: "success").increment()
            logger.info("backup taken and verified", metadata: [
                "backup": "\(o.path)", "bytes": "\(o.manifest.totalBytes)", "files": "\(o.manifest.files.count)",
                "linked": "\(o.linkedFiles)", "linked_live": "\(o.linkedLiveFiles)", "copied": "\(o.copiedFiles)", "in_object_store_not_copied": "\(o.filesInObjectStore)", "seconds": "\(String(format: "%.3f", o.seconds))",
                "pruned": "\(o.pruned.count)",
            ])
        case .failure(let error):
            RoostMetrics.backups(outcome: "failure").increment()
            logger.error(scheduled ? "scheduled backup failed" : "backup failed", metadata: ["dir": "\(settings.dir ?? "")", "reason": "\(error)"])
        }
    }
}
