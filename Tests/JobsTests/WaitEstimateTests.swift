import Dispatch
import Logging
import Jobs
import Testing

@Suite struct WaitEstimateTests {
    @Test func waitGrowsWithTheQueueAndShrinksWithThreads() {
        let estimate = WaitEstimate(initial: 0.5)
        #expect(estimate.wait(queued: 0, threads: 2) == 0)
        #expect(estimate.wait(queued: 4, threads: 2) == 1.0)
        #expect(estimate.wait(queued: 4, threads: 1) == 2.0)
        #expect(estimate.wait(queued: 3, threads: 0) == 1.5, "no threads counts as one")
    }

    @Test func finishedJobsMoveTheAverageTowardsTheirTime() {
        let estimate = WaitEstimate(initial: 0.1, weight: 0.5)
        estimate.record(seconds: 0.9)
        #expect(abs(estimate.jobSeconds - 0.5) < 1e-9)
        // A machine that slows down (hashes taking 2 s) soon refuses more.
        for _ in 0..<20 { estimate.record(seconds: 2) }
        #expect(estimate.jobSeconds > 1.99)
        #expect(estimate.wait(queued: 4, threads: 2) > 3.9)
    }
}

@Suite struct WorkerPoolAdmissionTests {
    /// A pool with `maxWait` refuses a job once the jobs ahead of it would
    /// take longer than that; one without it only stops at its capacity.
    @Test(arguments: [(maxWait: 0.05 as Double?, secondAccepted: false), (maxWait: nil, secondAccepted: true)])
    func refusesWorkExpectedToWaitTooLong(maxWait: Double?, secondAccepted: Bool) throws {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let pool = WorkerPool<Void, @Sendable () -> Void>(
            name: "admission-test", threads: 1, capacity: 8, maxWait: maxWait, assumedJobSeconds: 0.1,
            logger: Logger(label: "test"), makeContext: {}, run: { _, jobs in for job in jobs { job() } })
        try pool.start()
        let first = pool.submit { started.signal(); release.wait() }
        #expect(first, "an idle pool takes the first job")
        started.wait()
        // One job runs (assumed 0.1 s): a second would wait about 0.1 s.
        let second = pool.submit {}
        #expect(second == secondAccepted)
        release.signal()
        pool.shutdown()
    }

    /// With lanes (the hash pool: log-ins before sign-ups), a full later lane
    /// turns away its own jobs, never lane 0's; the thread kept for lane 0
    /// runs a lane-0 job while the other is held by a later lane's.
    @Test func aFullLaterLaneNeverRefusesTheFirst() throws {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), ran = DispatchSemaphore(value: 0)
        let pool = WorkerPool<Void, @Sendable () -> Void>(
            name: "lane-test", threads: 2, capacity: 4, lanes: 2, firstLaneThreads: 1, maxWait: 0.25, assumedJobSeconds: 0.1,
            logger: Logger(label: "test"), makeContext: {}, run: { _, jobs in for job in jobs { job() } })
        try pool.start()
        // The one thread that takes sign-ups is held by one; more queue up until
        // their expected wait (0.1 s each on one thread) passes 0.25 s.
        let holding: @Sendable () -> Void = { held.signal(); release.wait() }
        let first = pool.submit(holding, lane: 1)
        #expect(first)
        held.wait()
        var queued = 0
        while pool.submit({}, lane: 1) { queued += 1 }
        #expect(queued == 2, "sign-ups are refused by their own lane's wait")
        // A log-in is admitted at once and runs on the kept thread meanwhile.
        let logIn: @Sendable () -> Void = { ran.signal() }
        let admitted = pool.submit(logIn, lane: 0)
        #expect(admitted)
        #expect(ran.wait(timeout: .now() + 5) == .success, "the log-in ran while sign-ups held the other thread")
        release.signal()
        pool.shutdown()
    }
}
