import Foundation
import Logging

/// Named threads draining one `BoundedQueue`. Each thread builds its own
/// context (for example a database connection) on start and keeps it, so
/// nothing thread-confined crosses threads.
public final class WorkerPool<Context, Job>: @unchecked Sendable {
    public let name: String
    public let queue: BoundedQueue<Job>
    private let threadCount: Int
    /// Threads that take lane 0's jobs only.
    private let firstLaneThreads: Int
    private let batchSize: Int
    private let nice: Int32
    private let answersRequests: Bool
    private let makeContext: @Sendable () throws -> Context
    private let run: @Sendable (Context, [Job]) -> Void
    private let logger: Logger
    private let finished = DispatchGroup()
    private let busyLock = NSLock()
    private var busy = 0
    /// With `maxWait`: recent job times, and the longest expected wait a new job may have.
    private let admission: (estimate: WaitEstimate, maxWait: Double)?

    /// - Parameters:
    ///   - threads: how many worker threads drain the queue.
    ///   - capacity: how many jobs may wait before `submit` refuses.
    ///   - batchSize: how many jobs one `run` call may receive (group commit).
    ///   - makeContext: builds a thread's context, on that thread.
    ///   - run: does the work of a batch of jobs.
    ///   - lanes: priority lanes of the queue (see `BoundedQueue`).
    ///   - firstLaneThreads: how many of the threads are kept for lane 0
    ///     (fewer than `threads`; with two lanes or more): they take nothing
    ///     else, run at the daemon's own priority (`nice` lowers the others),
    ///     and get lane 0's next job when they are free. So later lanes never
    ///     hold every thread, and lane 0's next job waits for none of theirs.
    ///   - nice: how much lower than the daemon's the threads' CPU priority is.
    ///   - answersRequests: requests wait on these threads as they come (the
    ///     readers): they get `NamedThread.requestSliceNanoseconds`.
    ///   - maxWait: when set, `submit` also refuses a job whose expected wait
    ///     (jobs ahead × recent job time ÷ threads) passes this many seconds,
    ///     so a slow pool answers 503 at once instead of after a client timeout.
    ///   - assumedJobSeconds: the job time `maxWait` assumes before any job has run.
    ///   - spinBeforeSleep: how long an idle thread keeps looking for work
    ///     before it sleeps (see `BoundedQueue`); for pools of short jobs.
    public init(name: String, threads: Int, capacity: Int, lanes: Int = 1, firstLaneThreads: Int = 0, batchSize: Int = 1, nice: Int32 = 0,
                answersRequests: Bool = false, maxWait: Double? = nil, assumedJobSeconds: Double = 0.25, spinBeforeSleep: Duration = .zero, logger: Logger,
                makeContext: @escaping @Sendable () throws -> Context,
                run: @escaping @Sendable (Context, [Job]) -> Void) {
        self.name = name
        self.threadCount = max(1, threads)
        self.firstLaneThreads = lanes > 1 ? min(max(0, firstLaneThreads), self.threadCount - 1) : 0
        self.queue = BoundedQueue(capacity: capacity, lanes: lanes, spinBeforeSleep: spinBeforeSleep)
        self.nice = nice
        self.answersRequests = answersRequests
        self.batchSize = max(1, batchSize)
        self.makeContext = makeContext
        self.run = run
        self.logger = logger
        self.admission = maxWait.map { (WaitEstimate(initial: assumedJobSeconds), $0) }
    }

    /// Starts the threads. Throws if a thread cannot build its context.
    public func start() throws {
        let ready = DispatchSemaphore(value: 0)
        let failure = LockedBox<(any Error)?>(nil)
        for i in 0..<threadCount {
            // The last `firstLaneThreads` threads are kept for lane 0.
            let firstLaneOnly = i >= threadCount - firstLaneThreads
            finished.enter()
            // Room for libvips and SQLite call chains (virtual memory only).
            NamedThread.start("\(name)-\(i)", stackSize: 8 << 20, answersRequests: answersRequests) { [self] in
                defer { finished.leave() }
                if nice > 0 && !firstLaneOnly { Self.lowerThreadPriority(by: nice) }
                let context: Context
                do {
                    context = try makeContext()
                } catch {
                    failure.set(error)
                    ready.signal()
                    return
                }
                ready.signal()
                while let jobs = queue.take(max: batchSize, firstLaneOnly: firstLaneOnly) {
                    busyLock.lock(); busy += 1; busyLock.unlock()
                    let started = DispatchTime.now().uptimeNanoseconds
                    run(context, jobs)
                    if let estimate = admission?.estimate {
                        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                        estimate.record(seconds: seconds / Double(jobs.count))
                    }
                    busyLock.lock(); busy -= 1; busyLock.unlock()
                }
            }
        }
        for _ in 0..<threadCount { ready.wait() }
        if let error = failure.get() {
            queue.close()
            throw error
        }
        logger.debug("worker pool started", metadata: ["pool": "\(name)", "threads": "\(threadCount)"])
    }

    /// Queues a job (in `lane`, 0 first). Returns false when the queue is full: answer 503.
    /// With `maxWait`, a job's expected wait counts only the jobs it queues
    /// behind (its own lane and those before it) and the running ones, so
    /// a full low-priority lane never turns away a higher-priority job.
    public func submit(_ job: Job, lane: Int = 0) -> Bool {
        if let admission {
            let threads = lane > 0 ? threadCount - firstLaneThreads : threadCount
            if admission.estimate.wait(queued: queue.count(throughLane: lane) + busyThreads, threads: threads) > admission.maxWait {
                return false
            }
        }
        return queue.offer(job, lane: lane)
    }

    /// Sets the calling thread's nice value (Linux priorities are per thread
    /// id); threads it creates later inherit it.
    public static func lowerThreadPriority(by nice: Int32) {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard n > 0, let tid = String(cString: buffer).split(separator: "/").last.flatMap({ id_t($0) }) else { return }
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, nice)
    }

    /// Stops taking jobs, lets queued ones finish, and waits for the threads.
    /// - Parameter discardingQueued: drop jobs still waiting (running ones
    ///   finish) — for work that is durable elsewhere or whose client is gone.
    public func shutdown(discardingQueued: Bool = false) {
        let dropped = queue.close(discardingQueued: discardingQueued)
        if dropped > 0 { logger.info("dropped queued jobs at shutdown", metadata: ["pool": "\(name)", "jobs": "\(dropped)"]) }
        finished.wait()
    }

    /// Jobs waiting and threads busy, for health checks and metrics.
    public var depth: Int { queue.count }
    public var busyThreads: Int { busyLock.lock(); defer { busyLock.unlock() }; return busy }
    public var threads: Int { threadCount }
}

/// A value guarded by a lock.
public final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    public func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
    /// Changes the value in place under the lock.
    public func update(_ change: (inout Value) -> Void) { lock.lock(); change(&value); lock.unlock() }
}
