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
