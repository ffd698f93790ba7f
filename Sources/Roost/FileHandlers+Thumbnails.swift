import Daemon
import Files
import Foundation
import HTTP
import Jobs
import JSON
import Logging
import Store

/// Drains the durable thumbnail jobs on a bounded libvips pool, and makes
/// other variants on demand, one computation per variant at a time.
///
/// A job leaves `_file_jobs` only in the commit that records its thumbnails,
/// so a job cut short by a crash is found again by `rescan` after restart.
final class ThumbnailScheduler: @unchecked Sendable {
    typealias Task = @Sendable () -> Void
    typealias Outcome = Result<ThumbnailInfo, any Error>

    let pool: WorkerPool<Void, Task>
    let thumbnailer: Thumbnailer
    let sizes: [Int]
    let pools: StorePools
    let logger: Logger
    let flights = SingleFlight<String, Outcome>()
    // Guarded by `lock`: files whose job is queued or running.
    private let lock = NSLock()
    private var running: Set<String> = []

    init(config: RoostConfig, pools: StorePools, logger: Logger) {
        thumbnailer = Thumbnailer(layout: FileLayout(dataDir: config.dataDir), syncWrites: config.durability == .power)
        sizes = config.thumbnailSizes
        self.pools = pools
        self.logger = logger
        pool = WorkerPool(name: "thumbnail", threads: config.thumbnailWorkers, capacity: 1024, logger: logger,
                          makeContext: { () },
                          run: { _, tasks in for task in tasks { task() } })
    }

    private let stopped = LockedBox(false)

    func start() throws {
        try Vips.start()
        try pool.start()
        // Jobs the pool could not take (full) or that a crash cut short are
        // found again every few seconds.
        let thread = Thread { [self] in
            while !stopped.get() {
                Thread.sleep(forTimeInterval: 3)
                if !stopped.get() { rescan() }
            }
        }
        thread.name = "thumbnail-scan"
        thread.start()
    }

    func shutdown() {
        stopped.set(true)
        // Queued jobs stay in `_file_jobs` and run again after the restart.
        pool.shutdown(discardingQueued: true)
    }

    /// Queues the job of one file unless it is already queued; false when the pool is full
    /// (the job stays in the database and a later rescan picks it up).
    @discardableResult
    func enqueue(_ job: FileJobRecord) -> Bool {
        lock.lock()
        guard running.insert(job.fileID).inserted else { lock.unlock(); return true }
        lock.unlock()
        let accepted = pool.submit { [self] in run(job) }
        if !accepted { finished(job.fileID) }
        return accepted
    }

    private func finished(_ id: String) {
        lock.lock()
        running.remove(id)
        lock.unlock()
    }

    /// Looks for jobs in the database that are not queued (after a restart, or
    /// when the pool was full). Runs the query on a reader thread.
    func rescan() {
        let (scheduler, logger) = (self, self.logger)
        _ = pools.readers.submit { reader in
            do {
                for job in try reader.pendingFileJobs(limit: 512) { scheduler.enqueue(job) }
            } catch {
                logger.warning("thumbnail job scan failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// On a pool thread: every configured size, then one commit.
    private func run(_ job: FileJobRecord) {
        let type = MediaType(job.contentType)
        var results: [String: JSONValue] = [:]
        for size in sizes {
            let spec = ThumbnailSpec.longest(size)
            do {
                results["\(size)"] = .object(Self.describe(try thumbnailer.make(job.fileID, type, spec), id: job.fileID))
                Telemetry.thumbnailsGenerated().increment()
            } catch {
                var failed = JSONObject()
                failed["state"] = .string("failed")
                failed["error"] = .string("\(error)")
                results["\(size)"] = .object(failed)
            }
        }
        let (id, layout, logger, thumbnails) = (job.fileID, thumbnailer.layout, self.logger, results)
        let write = StorePools.WriteJob(operation: { writer in
            if try !writer.completeFileJob(id: id, thumbnails: thumbnails) {
                // Deleted meanwhile: its thumbnails go too.
                try? FileManager.default.removeItem(atPath: layout.thumbDirectory(id))
            }
            return Response(status: 204)
        }, completion: { [self] result in
            if case .failure(let error) = result {
                logger.warning("thumbnail job not recorded; it will run again", metadata: ["file": "\(id)", "error": "\(error)"])
            }
            finished(id)
        })
        if !pools.writer.submit(write) { finished(id) }
    }

    static func describe(_ info: ThumbnailInfo, id: String) -> JSONObject {
        var t = JSONObject()
        t["state"] = .string("ready")
        t["contentType"] = .string(info.contentType.name)
        t["width"] = .int(Int64(info.width))
        t["height"] = .int(Int64(info.height))
        t["size"] = .int(Int64(info.size))
        t["url"] = .string("/files/\(id)/thumbnail?size=\(info.spec.width)")
        return t
    }

    /// Makes one variant on the pool, at most once at a time per variant;
    /// `completion` runs on a pool thread (or at once when the pool is full).
    func variant(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec, completion: @escaping @Sendable (Outcome) -> Void) {
        let thumbnailer = self.thumbnailer
        flights.join(id + "/" + spec.name, refused: .failure(HTTPError.overloaded(retryAfter: 1)), waiter: completion) { finish in
            pool.submit {
                let made = Result { try thumbnailer.make(id, type, spec) }
                if case .success = made { Telemetry.thumbnailsGenerated().increment() }
                finish(made)
            }
        }
    }
}
