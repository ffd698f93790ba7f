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
}
