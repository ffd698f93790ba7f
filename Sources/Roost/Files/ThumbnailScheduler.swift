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
/// Each configured size of a job is its own task in a priority lane: a
/// variant a client waits for first, then the smallest size of every queued
/// file (what lists show), then larger ones. Each size is committed to the
/// metadata as it finishes; a job leaves `_file_jobs` only in the commit that
/// leaves no size pending, so a job cut short by a crash is found again by
/// `rescan` after restart. The pool runs at a lower CPU priority than the
/// loops, readers and uploads.
final class ThumbnailScheduler: @unchecked Sendable {
    typealias Task = @Sendable () -> Void
    typealias Outcome = Result<ThumbnailInfo, any Error>

    let pool: WorkerPool<Void, Task>
    let thumbnailer: Thumbnailer
    /// Configured sizes, smallest first (lane 1 + index).
    let sizes: [Int]
    let pools: StorePools
    let logger: Logger
    /// libvips' state: a job that cannot load it stays pending for a restart.
    let images: ImageLibrary
    let flights = SingleFlight<String, Outcome>()
    // Guarded by `lock`: sizes still to finish per file whose job is queued or running.
    private let lock = NSLock()
    private var running: [String: Int] = [:]

    init(config: RoostConfig, store: any ObjectStore, pools: StorePools, logger: Logger) {
        thumbnailer = Thumbnailer(store: store, syncWrites: config.durability == .power)
        sizes = config.thumbnailSizes
        self.pools = pools
        self.logger = logger
        images = ImageLibrary(logger: logger)
        pool = WorkerPool(name: "thumbnail", threads: config.thumbnailWorkers, capacity: 1024, lanes: 1 + sizes.count, nice: 19,
                          logger: logger,
                          makeContext: { () },
                          run: { _, tasks in for task in tasks { task() } })
    }

    private let stopped = LockedBox(false)

    func start() throws {
        // libvips loads at the first image (see `Vips.start`), not here.
        try pool.start()
        // Jobs the pool could not take (full) or that a crash cut short are
        // found again every few seconds.
        NamedThread.start("thumbnail-scan", background: true) { [self] in
            while !stopped.get() {
                Thread.sleep(forTimeInterval: 3)
                if !stopped.get() { rescan() }
            }
        }
    }

    func shutdown() {
        stopped.set(true)
        // Queued jobs stay in `_file_jobs` and run again after the restart.
        pool.shutdown(discardingQueued: true)
    }

    /// Queues every size of one file's job unless it is already queued; false
    /// when the pool is full (the job stays in the database and a later rescan
    /// picks it up).
    @discardableResult
    func enqueue(_ job: FileJobRecord) -> Bool {
        lock.lock()
        guard running[job.fileID] == nil else { lock.unlock(); return true }
        running[job.fileID] = sizes.count
        lock.unlock()
        var accepted = true
        for (index, size) in sizes.enumerated() where !pool.submit({ [self] in run(job, size: size) }, lane: 1 + index) {
            accepted = false
            finished(job.fileID)
        }
        return accepted
    }

    /// One size of `id` is done (or will not run now).
    private func finished(_ id: String) {
        lock.lock()
        if let left = running[id] { running[id] = left > 1 ? left - 1 : nil }
        let done = running[id] == nil
        lock.unlock()
        // Every size is done: the local copy kept for them (S3) can go.
        if done { thumbnailer.store.release(id) }
    }

    /// Looks for jobs in the database that are not queued (after a restart, or
    /// when the pool was full). Runs the query on a reader thread. Once
    /// libvips has failed to load, jobs wait in the database for a restart.
    /// On PostgreSQL the query claims: this node's own jobs (lease renewed),
    /// unheld ones, and those of a node whose lease passed (killed), so
    /// several nodes rescanning make each thumbnail once.
    func rescan() {
        if images.failed { return }
        let (scheduler, logger) = (self, self.logger)
        _ = pools.readers.submit { reader in
            do {
                for job in try reader.pendingFileJobs(limit: 512) { scheduler.enqueue(job) }
            } catch {
                logger.warning("thumbnail job scan failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// On a pool thread: one size of one file, then its own commit.
    private func run(_ job: FileJobRecord, size: Int) {
        let type = MediaType(job.contentType)
        let state: ThumbnailState
        do {
            let spec = ThumbnailSpec.longest(size)
            if let stored = thumbnailer.existing(job.fileID, type, spec) {
                state = Self.ready(stored, id: job.fileID)
            } else {
                state = Self.ready(try thumbnailer.make(job.fileID, type, spec), id: job.fileID)
                RoostMetrics.thumbnailsGenerated().increment()
            }
        } catch let failure as Vips.Unavailable {
            // Not the image's fault: the job stays pending (see `rescan`).
            images.reportUnavailable(failure.description)
            finished(job.fileID)
            return
        } catch is ObjectStoreUnavailable {
            // The bucket did not answer (logged by the store): the job stays
            // pending and a later rescan tries again.
            finished(job.fileID)
            return
        } catch {
            state = .failed(error: "\(error)")
        }
        let (id, store, logger, names) = (job.fileID, thumbnailer.store, self.logger, sizes.map { "\($0)" })
        let write = StorePools.WriteJob(operation: { writer in
            if try !writer.recordThumbnail(id: id, name: "\(size)", state: state, sizes: names) {
                // Deleted meanwhile: its thumbnails go too.
                store.removeThumbnails(id)
            }
        }, completion: { [self] result in
            if case .failure(let error) = result {
                logger.warning("thumbnail not recorded; its job will run again", metadata: ["file": "\(id)", "error": "\(error)"])
            }
            finished(id)
        })
        if !pools.writer.submit(write) { finished(id) }
    }

    static func ready(_ info: ThumbnailInfo, id: String) -> ThumbnailState {
        .ready(contentType: info.contentType.name, width: info.width, height: info.height, size: info.size,
               url: "/files/\(id)/thumbnail?size=\(info.spec.width)", madeAt: Timestamp.now())
    }

    /// Makes one variant on the pool, at most once at a time per variant;
    /// `completion` runs on a pool thread (or at once when the pool is full).
    /// Variants beyond the configured sizes kept per file; making another
    /// removes the one made longest ago.
    static let oneOffVariantsPerFile = 16

    func variant(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec, completion: @escaping @Sendable (Outcome) -> Void) {
        let (thumbnailer, kept) = (self.thumbnailer, Set(sizes.map { ThumbnailSpec.longest($0).name }))
        flights.join(id + "/" + spec.name, refused: .failure(Overload.thumbnails.error), waiter: completion) { finish in
            pool.submit {
                let made = Result { try thumbnailer.make(id, type, spec) }
                if case .success = made {
                    RoostMetrics.thumbnailsGenerated().increment()
                    thumbnailer.evictOneOffVariants(id, limit: Self.oneOffVariantsPerFile, kept: kept)
                }
                finish(made)
            }
        }
    }
}
