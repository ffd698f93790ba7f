import Daemon
import EventLoop
import Foundation
import HTTP
import Jobs
import Logging
import Store
import StoreSQLite
import Timing

/// The two queues behind the API: many reader threads with query-only
/// connections, and one writer thread that group-commits batches.
final class StorePools: Sendable {
    typealias ReadJob = @Sendable (any DocumentReading) -> Void
    /// Work that needs no database connection (hashing).
    typealias PlainJob = @Sendable () -> Void

    /// One operation of the writer's group commit, generic over what it
    /// produces (a response, a count, nothing): `completion` gets that after
    /// COMMIT, or the error that undid the operation.
    struct WriteJob: Sendable {
        /// Runs in the transaction; returns the completion, bound to the result.
        let operation: @Sendable (any DocumentWriting) throws -> @Sendable () -> Void
        let failed: @Sendable (any Error) -> Void

        init<Value: Sendable>(operation: @escaping @Sendable (any DocumentWriting) throws -> Value,
                              completion: @escaping @Sendable (Result<Value, any Error>) -> Void) {
            self.operation = { writer in
                let value = try operation(writer)
                return { completion(.success(value)) }
            }
            failed = { error in completion(.failure(error)) }
        }
    }

    let readers: WorkerPool<any DocumentReading, ReadJob>
    /// Reads that ran past their slice on a reader start over here, on a few
    /// threads with the full time limit: long scans queue among themselves
    /// while every other read keeps its latency.
    let slowReaders: WorkerPool<any DocumentReading, ReadJob>
    /// Clients whose reads start on the slow lane for a while (one overran).
    let slowLaneAddresses = SlowLaneAddresses()
    /// A reader's time slice (`read_slice_ms`).
    let readSliceNanoseconds: UInt64
    let writer: WorkerPool<any DocumentWriting, WriteJob>
    /// Password hashing: few threads, because each hash takes the Argon2id
    /// cost's memory. They hold no connection: what a hash needs from the
    /// database is read before it is queued. Two lanes (`HashLane`): log-ins
    /// and password checks go before sign-ups.
    let hashers: WorkerPool<Void, PlainJob>
    /// Short reads a loop answers itself while the database is in memory (nil: off, or PostgreSQL).
    let loopReads: LoopReads?
    /// The longest a log-in may expect to wait before its hash starts (judged
    /// from recent hash times, which grow with the machine's load); beyond it
    /// the answer is 503 + Retry-After, well inside client timeouts.
    static let maxHashWait = 3.0
    /// How long an idle reader yields and looks for work before it sleeps.
    static let readerSpin: Duration = .microseconds(100)
    let logger: Logger
    /// The database the pools' connections open (SQLite or PostgreSQL).
    let engine: any StoreEngine
    /// Runs on the writer thread after each commit that changed something (wakes live streams).
    let afterCommit: LockedBox<(@Sendable () -> Void)?>
    /// Called after a commit that revoked sessions (log-out): live streams end.
    let sessionsRevoked = LockedBox<(@Sendable () -> Void)?>(nil)
    /// How many commits revoked sessions; only the writer thread moves it
    /// (`sessionsEnded`). A write whose caller was found before it moved
    /// checks its session again in the writer (`CallerJobs.write`).
    let revocations = LockedBox<UInt64>(0)

    init(engine: any StoreEngine, writer documentWriter: any DocumentWriting, config: RoostConfig, logger: Logger) {
        self.logger = logger
        self.engine = engine
        readSliceNanoseconds = UInt64(config.readSliceMs) * 1_000_000
        let readTimer = RoostMetrics.databaseTimer(engine: engine.name, "read"), commitTimer = RoostMetrics.databaseTimer(engine: engine.name, "commit")
        // The loops' own connections (`loop_reads`) share the readers' part of the budget.
        let loopConnections = config.loopReads ? config.loops : 0
        let cache = SQLiteMemory.split(budget: config.sqliteCacheBytes, readers: config.readers + config.slowReaders + loopConnections)
        loopReads = LoopReads(engine: engine, config: config, pageCacheBytes: cache.reader, logger: logger)
        // Reads take tens of microseconds, so an idle reader keeps looking a
        // little before it sleeps: under load the next read is usually there
        // by then, and waking a parked thread cost more than the read itself
        // (most so on a virtual machine with CPU steal).
        let timedReads: @Sendable (any DocumentReading, [ReadJob]) -> Void = { reader, jobs in
            for job in jobs {
                let started = monotonicNanoseconds()
                job(reader)
                readTimer.recordNanoseconds(Int64(monotonicNanoseconds() &- started))
            }
        }
        /// A reader connection (named `role` on PostgreSQL) whose reads stop after `seconds`.
        let connection = { (role: String, seconds: Double) in { @Sendable () throws -> any DocumentReading in
            let reader = try engine.openReader(role: role)
            try reader.limitPageCache(bytes: cache.reader)
            try reader.mapFile(bytes: config.sqliteMmapBytes)
            reader.timeLimit = seconds
            return reader
        } }
        readers = WorkerPool(name: "reader", threads: config.readers, capacity: config.queueCapacity, answersRequests: true,
                             spinBeforeSleep: Self.readerSpin, logger: logger,
                             makeContext: connection("reader", Double(config.readSliceMs) / 1000), run: timedReads)
        slowReaders = WorkerPool(name: "slow-reader", threads: config.slowReaders, capacity: 16 * config.slowReaders, logger: logger,
                                 makeContext: connection("slow-reader", config.queryTimeLimit), run: timedReads)
        // A short queue per lane that also refuses a log-in expected to wait
        // past `maxHashWait`: it gets 503 + Retry-After instead of timing out.
        // Sign-ups queue in a lane of their own behind log-ins. Hash threads
        // run at a lower priority, so the event loops and readers stay
        // responsive while log-ins saturate them; the one kept for log-ins
        // (`HashLane`) does not, so a flood that keeps the loops busy does
        // not slow a log-in's hash tenfold.
        hashers = WorkerPool(name: "hasher", threads: config.hashConcurrency, capacity: 16 * config.hashConcurrency,
                             lanes: HashLane.allCases.count, firstLaneThreads: HashLane.reservedThreads(of: config.hashConcurrency), nice: 10,
                             maxWait: Self.maxHashWait, logger: logger, makeContext: {},
                             run: { _, jobs in for job in jobs { job() } })
        let afterCommit = LockedBox<(@Sendable () -> Void)?>(nil)
        self.afterCommit = afterCommit
        let box = LockedBox<(any DocumentWriting)?>(documentWriter)
        let batches = RoostMetrics.writeCommits()
        writer = WorkerPool(name: "writer", threads: 1, capacity: config.queueCapacity, batchSize: config.writeBatch, logger: logger,
                            makeContext: {
                                guard let w = box.get() else { throw StoreError.invalid("the writer connection was already taken") }
                                box.set(nil)
                                try w.limitPageCache(bytes: cache.writer)
                                return w
                            },
                            run: { writer, jobs in
                                let started = monotonicNanoseconds()
                                let results = writer.commitBatch(jobs.map { $0.operation })
                                commitTimer.recordNanoseconds(Int64(monotonicNanoseconds() &- started))
                                batches.commits.increment()
                                batches.operations.increment(by: Int64(jobs.count))
                                for (job, result) in zip(jobs, results) {
                                    switch result {
                                    case .success(let complete): complete()
                                    case .failure(let error): job.failed(error)
                                    }
                                }
                                // The answers first: the live fan-out's wake-up does not
                                // stand between a commit and its client's next request.
                                if results.contains(where: { if case .success = $0 { return true } else { return false } }) {
                                    afterCommit.get()?()
                                }
                            })
    }

    func start() throws {
        try readers.start()
        try slowReaders.start()
        try writer.start()
        try hashers.start()
    }

    /// Queued reads and hashes are dropped (their clients are gone with the
    /// loops); queued writes are committed, never half-done.
    func shutdown() {
        hashers.shutdown(discardingQueued: true)
        readers.shutdown(discardingQueued: true)
        slowReaders.shutdown(discardingQueued: true)
        writer.shutdown()
    }

    /// Runs `body` on a hash thread, queued in `lane`. It returns a response,
    /// or nil when it handed the request on (to the writer) and that will answer.
    func hashing(_ request: Request, _ out: ResponseWriter, lane: HashLane, _ body: @escaping @Sendable () throws -> Response?) {
        let logger = self.logger
        hashers.submit({
            do {
                if let response = try body() { out.send(response) }
            } catch {
                out.send(ErrorResponses.response(for: error, request, logger))
            }
        }, lane: lane.rawValue, orAnswer: out, .hashes)
    }

    /// On the writer thread, after a commit that revoked sessions (log-out,
    /// an admin's revocation, a new password, a deleted user): writes in
    /// flight with a caller found before it check their session again, and
    /// live streams of revoked sessions end.
    func sessionsEnded() {
        revocations.set(revocations.get() &+ 1)
        sessionsRevoked.get()?()
    }

    /// Runs `operation` in the writer's next group commit and waits for its
    /// outcome, for background threads (never a loop). nil when the queue was full.
    func onWriter<Value: Sendable>(_ operation: @escaping @Sendable (any DocumentWriting) throws -> Value) -> Result<Value, any Error>? {
        let outcome = LockedBox<Result<Value, any Error>?>(nil), done = DispatchSemaphore(value: 0)
        guard writer.submit(WriteJob(operation: operation, completion: { outcome.set($0); done.signal() })) else { return nil }
        done.wait()
        return outcome.get()
    }

    /// Runs `operation` on a reader and waits for its outcome, for background
    /// threads (never a loop). nil when the queue was full.
    func onReader<Value: Sendable>(_ operation: @escaping @Sendable (any DocumentReading) throws -> Value) -> Result<Value, any Error>? {
        let outcome = LockedBox<Result<Value, any Error>?>(nil), done = DispatchSemaphore(value: 0)
        guard readers.submit({ reader in outcome.set(Result { try operation(reader) }); done.signal() }) else { return nil }
        done.wait()
        return outcome.get()
    }

    /// Fire-and-forget write (e.g. a session renewal); dropped if the queue is full.
    func background(_ operation: @escaping @Sendable (any DocumentWriting) throws -> Void) {
        _ = writer.submit(WriteJob(operation: operation, completion: { _ in }))
    }

    /// Runs `body` on a reader thread. It returns a response, or nil when it
    /// handed the request on (to the writer or the hash pool) and that will answer.
    /// - Returns: false when the queue was full (503 already sent).
    @discardableResult
    func readStep(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentReading) throws -> Response?) -> Bool {
        readStep(request, out, authenticate: Self.nobody) { reader, _ in try body(reader) }
    }

    /// For a public step: no caller to find.
    private static let nobody: @Sendable (Request, any DocumentReading) throws -> Void = { _, _ in }

    /// Runs `authenticate` and then `body` with its result on a reader thread
    /// (see `CallerJobs`). A read that outgrows its slice starts over on the
    /// slow lane with the caller already found.
    /// - Returns: false when the queue was full (503 already sent).
    @discardableResult
    func readStep<Caller: Sendable>(_ request: Request, _ out: ResponseWriter,
                                    authenticate: @escaping @Sendable (Request, any DocumentReading) throws -> Caller,
                                    _ body: @escaping @Sendable (any DocumentReading, Caller) throws -> Response?) -> Bool {
        if slowLaneAddresses.isListed(request.remoteAddress) {
            RoostMetrics.slowLaneReads(reason: "address").increment()
            return slowRead(request, out) { reader in try body(reader, try authenticate(request, reader)) }
        }
        return readers.submit({ [self] reader in
            var found: Caller? = nil
            do {
                let caller = try authenticate(request, reader)
                found = caller
                if let response = try body(reader, caller) { out.send(response) }
            } catch where Self.ranPastSlice(error) {
                slowLaneAddresses.overran(request.remoteAddress)
                RoostMetrics.slowLaneReads(reason: "overran").increment()
                let known = found
                slowRead(request, out) { reader in try body(reader, try known ?? authenticate(request, reader)) }
            } catch {
                out.send(ErrorResponses.response(for: error, request, logger))
            }
        }, orAnswer: out, .reads)
    }

    /// A short read (a GET by id, a few pages): runs on the request's loop
    /// itself when `loopReads` allows it now (see `LoopReads`), else as `readStep`.
    /// A database error on the loop hands it to the readers; any other
    /// error is the answer, as on a reader.
    /// - Returns: false when the queue was full (503 already sent).
    @discardableResult
    func shortReadStep<Caller: Sendable>(_ request: Request, _ out: ResponseWriter,
                                         authenticate: @escaping @Sendable (Request, any DocumentReading) throws -> Caller,
                                         _ body: @escaping @Sendable (any DocumentReading, Caller) throws -> Response?) -> Bool {
        if let loopReads, let loop = out.currentLoop, !slowLaneAddresses.isListed(request.remoteAddress),
           let reader = loopReads.reader(on: loop) {
            do {
                let caller = try authenticate(request, reader)
                if let response = try body(reader, caller) { out.send(response) }
                loopReads.didServe()
                return true
            } catch {
                guard case .database = StoreError.wrap(error) else {
                    out.send(ErrorResponses.response(for: error, request, logger))
                    loopReads.didServe()
                    return true
                }
                loopReads.endSnapshot(loop.index)
                loopReads.didHandOn()
            }
        }
        return readStep(request, out, authenticate: authenticate, body)
    }

    /// Starts a read over on a slow reader (it outgrew its slice on a reader).
    @discardableResult
    private func slowRead(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentReading) throws -> Response?) -> Bool {
        let logger = self.logger, addresses = slowLaneAddresses, slice = readSliceNanoseconds
        return slowReaders.submit({ reader in
            let started = monotonicNanoseconds()
            // Still heavy: the client stays listed while it keeps sending such reads.
            defer { if monotonicNanoseconds() &- started > slice { addresses.overran(request.remoteAddress) } }
            do {
                if let response = try body(reader) { out.send(response) }
            } catch {
                out.send(ErrorResponses.response(for: error, request, logger))
            }
        }, orAnswer: out, .slowReads)
    }

    /// True when a read was stopped at its reader's time slice.
    static func ranPastSlice(_ error: any Error) -> Bool {
        if case .database(let db) = StoreError.wrap(error) { return db.isInterrupted }
        return false
    }

    /// Runs `operation` in the writer's next group commit; answers after COMMIT.
    /// `committed` runs (on the writer thread, before the answer is sent)
    /// only when the operation succeeded and its transaction committed.
    func write(_ request: Request, _ out: ResponseWriter, committed: (@Sendable () -> Void)? = nil,
               _ operation: @escaping @Sendable (any DocumentWriting) throws -> Response) {
        let logger = self.logger
        writer.submit(WriteJob(operation: operation) { result in
            if case .success = result { committed?() }
            out.send(ErrorResponses.catching(request, logger) { try result.get() })
        }, orAnswer: out, .writes)
    }
}
