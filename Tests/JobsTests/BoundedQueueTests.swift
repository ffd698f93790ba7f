import Foundation
import Jobs
import Testing

@Suite struct BoundedQueueTests {
    @Test func fifoWithinALane() {
        let queue = BoundedQueue<Int>(capacity: 4)
        for i in 1...4 { #expect(queue.offer(i)) }
        #expect(!queue.offer(5), "a full queue refuses instead of growing")
        #expect(queue.take(max: 3) == [1, 2, 3])
        #expect(queue.offer(6))
        #expect(queue.take(max: 10) == [4, 6])
    }

    @Test func lowerLanesComeFirst() {
        let queue = BoundedQueue<String>(capacity: 8, lanes: 3)
        #expect(queue.offer("large-1", lane: 2))
        #expect(queue.offer("small-1", lane: 1))
        #expect(queue.offer("large-2", lane: 2))
        #expect(queue.offer("small-2", lane: 1))
        #expect(queue.offer("waiting client", lane: 0))
        #expect(queue.count == 5)
        #expect(queue.take(max: 2) == ["waiting client", "small-1"])
        #expect(queue.offer("small-3", lane: 1))
        #expect(queue.take(max: 10) == ["small-2", "small-3", "large-1", "large-2"])
    }

    /// Each lane has its own capacity: a backlog of large work never blocks small work.
    @Test func eachLaneHasItsOwnCapacity() {
        let queue = BoundedQueue<Int>(capacity: 2, lanes: 2)
        #expect(queue.offer(1, lane: 1) && queue.offer(2, lane: 1))
        #expect(!queue.offer(3, lane: 1))
        #expect(queue.offer(4, lane: 0) && queue.offer(5, lane: 0))
        #expect(!queue.offer(6, lane: 0))
        #expect(queue.take(max: 4) == [4, 5, 1, 2])
    }

    /// A consumer kept for lane 0 never takes a later lane's element; while
    /// it sleeps, the others leave it lane 0's next element; an element in a
    /// later lane still wakes a consumer that may take it.
    @Test func aFirstLaneConsumerTakesLaneZeroOnly() {
        let queue = BoundedQueue<String>(capacity: 4, lanes: 2)
        #expect(queue.offer("sign-up", lane: 1) && queue.offer("log-in", lane: 0))
        #expect(queue.count(throughLane: 0) == 1 && queue.count(throughLane: 1) == 2)
        #expect(queue.take(max: 4, firstLaneOnly: true) == ["log-in"])
        #expect(queue.take(max: 4) == ["sign-up"])

        let kept = LockedBox<[String]>([]), other = LockedBox<[String]>([])
        let done = DispatchSemaphore(value: 0)
        for (box, firstLaneOnly) in [(kept, true), (other, false)] {
            Thread {
                while let jobs = queue.take(max: 1, firstLaneOnly: firstLaneOnly) {
                    box.set(box.get() + jobs)
                    Thread.sleep(forTimeInterval: 0.1) // busy a while
                }
                done.signal()
            }.start()
        }
        Thread.sleep(forTimeInterval: 0.05) // both asleep
        #expect(queue.offer("sign-up 2", lane: 1))
        Thread.sleep(forTimeInterval: 0.05)
        #expect(other.get() == ["sign-up 2"] && kept.get().isEmpty)
        Thread.sleep(forTimeInterval: 0.1) // both asleep again
        for _ in 0..<3 { #expect(queue.offer("log-in", lane: 0)) }
        Thread.sleep(forTimeInterval: 0.05)
        // The kept consumer took the first; the other took the rest it was not left.
        #expect(kept.get() == ["log-in"] && other.get() == ["sign-up 2", "log-in"])
        queue.close()
        done.wait(); done.wait()
        #expect(kept.get().count + other.get().count == 4)
    }

    @Test func closingDrainsOrDiscards() {
        let queue = BoundedQueue<Int>(capacity: 4, lanes: 2)
        #expect(queue.offer(1, lane: 1) && queue.offer(2, lane: 0))
        queue.close()
        #expect(!queue.offer(3), "a closed queue refuses")
        #expect(queue.take(max: 10) == [2, 1])
        #expect(queue.take(max: 10) == nil)

        let discarding = BoundedQueue<Int>(capacity: 4, lanes: 2)
        #expect(discarding.offer(1, lane: 1) && discarding.offer(2, lane: 0))
        #expect(discarding.close(discardingQueued: true) == 2)
        #expect(discarding.take(max: 10) == nil)
    }

    /// A waiting consumer gets work offered while it spins, after it has gone
    /// to sleep, and the end of the queue, with or without a spin.
    @Test(arguments: [Duration.zero, .milliseconds(50)])
    func waitingConsumerGetsLateWorkAndTheClose(spin: Duration) {
        let queue = BoundedQueue<Int>(capacity: 4, spinBeforeSleep: spin)
        let taken = LockedBox<[[Int]?]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            for _ in 0..<3 {
                let jobs = queue.take(max: 4)
                taken.set(taken.get() + [jobs])
            }
            done.signal()
        }.start()
        usleep(5_000)  // inside a 50 ms spin
        #expect(queue.offer(1))
        usleep(200_000)  // long after it, the consumer sleeps on the condition
        #expect(queue.offer(2))
        usleep(5_000)
        queue.close()
        #expect(done.wait(timeout: .now() + 5) == .success, "the consumer did not finish")
        #expect(taken.get() == [[1], [2], nil])
    }
}
