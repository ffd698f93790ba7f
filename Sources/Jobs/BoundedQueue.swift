import Foundation
import Synchronization

/// A fixed-capacity queue shared by producer threads (event loops) and
/// consumer threads (workers). `offer` never blocks: a full queue says no,
/// and the caller answers 503 instead of piling up work.
///
/// A queue may have several priority lanes, each a FIFO of `capacity`
/// elements; `take` always empties lane 0 before lane 1, and so on. A
/// consumer may be kept for lane 0 (`take(max:firstLaneOnly:)`): it takes
/// nothing else, and while it sleeps the others leave it lane 0's next
/// element (so urgent work goes to the thread kept for it when that is free).
public final class BoundedQueue<Element>: @unchecked Sendable {
    // Guarded by `condition`, an adaptive pthread mutex + condvar (which
    // ThreadSanitizer understands): producers and consumers hold it for a
    // ring push or pop, so one that finds it taken spins briefly, not sleeps.
    private let condition = AdaptiveLock()
    private var lanes: [Ring]
    private var stored = 0 { didSet { visible.store(stored, ordering: .releasing) } }
    private var closed = false { didSet { visible.store(closed ? -1 : stored, ordering: .releasing) } }
    /// `stored` (or -1 once closed), read without the lock by a consumer
    /// looking for work before it sleeps (`spinWhileEmpty`).
    private let visible = Atomic<Int>(0)
    /// Consumers kept for lane 0 that are asleep in `take`.
    private var firstLaneSleepers = 0

    public let capacity: Int
    /// How long an empty `take` stays runnable (yielding) before it sleeps.
    private let spinBeforeSleep: Duration

    /// One lane: a ring buffer.
    struct Ring {
        var slots: [Element?]
        var head = 0
        var count = 0

        mutating func push(_ element: Element) {
            slots[(head + count) % slots.count] = element
            count += 1
        }

        mutating func pop() -> Element {
            let element = slots[head]!
            slots[head] = nil
            head = (head + 1) % slots.count
            count -= 1
            return element
        }
    }

    /// - Parameters:
    ///   - capacity: how many elements each lane holds.
    ///   - lanes: how many priority lanes (lane 0 first).
    ///   - spinBeforeSleep: how long an empty `take` keeps yielding and
    ///     looking before it sleeps on the condition. A job that arrives in
    ///     that time costs no futex wake-up of a parked thread, and the CPU
    ///     never goes idle between jobs, which on a virtual machine saves the
    ///     hypervisor's wake-up as well. 0 sleeps at once.
    public init(capacity: Int, lanes: Int = 1, spinBeforeSleep: Duration = .zero) {
        precondition(capacity > 0 && lanes > 0)
        self.capacity = capacity
        self.spinBeforeSleep = spinBeforeSleep
        self.lanes = Array(repeating: Ring(slots: Array(repeating: nil, count: capacity)), count: lanes)
    }

    /// Adds `element` to `lane` unless that lane is full or the queue closed.
    /// - Returns: false when refused.
    public func offer(_ element: Element, lane: Int = 0) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let lane = Swift.min(Swift.max(lane, 0), lanes.count - 1)
        guard !closed, lanes[lane].count < capacity else { return false }
        lanes[lane].push(element)
        stored += 1
        // With lanes, not every consumer may take every element: wake all.
        if lanes.count == 1 { condition.signal() } else { condition.broadcast() }
        return true
    }

    /// Waits for work and takes up to `max` elements, highest priority first;
    /// with `firstLaneOnly`, from lane 0 only.
    /// - Returns: nil once the queue is closed and drained.
    public func take(max: Int, firstLaneOnly: Bool = false) -> [Element]? {
        condition.lock()
        defer { condition.unlock() }
        if spinBeforeSleep > .zero { spinWhileEmpty(firstLaneOnly) }
        while takeable(firstLaneOnly) == 0 && !closed {
            if firstLaneOnly { firstLaneSleepers += 1 }
            condition.wait()
            if firstLaneOnly { firstLaneSleepers -= 1 }
        }
        var fromFirst = Swift.min(max, firstLaneTakeable(firstLaneOnly))
        let n = firstLaneOnly ? fromFirst : Swift.min(max, takeable(false))
        if n == 0 { return nil }
        var out: [Element] = []
        out.reserveCapacity(n)
        var lane = fromFirst > 0 ? 0 : 1
        while out.count < n {
            while lanes[lane].count == 0 { lane += 1 }
            out.append(lanes[lane].pop())
            if lane == 0 {
                fromFirst -= 1
                if fromFirst == 0 { lane = 1 }
            }
        }
        stored -= n
        return out
    }

    /// Lane 0's elements a consumer may take now (the lock held): those not
    /// left for the sleeping consumers kept for lane 0, unless it is one.
    private func firstLaneTakeable(_ firstLaneOnly: Bool) -> Int {
        firstLaneOnly ? lanes[0].count : Swift.max(0, lanes[0].count - firstLaneSleepers)
    }

    /// Elements a consumer may take now (the lock held).
    private func takeable(_ firstLaneOnly: Bool) -> Int {
        firstLaneOnly ? lanes[0].count : firstLaneTakeable(false) + (stored - lanes[0].count)
    }

    /// Elements in lanes 0 through `last` (the lock held).
    private func available(through last: Int) -> Int {
        last == lanes.count - 1 ? stored : lanes[0...last].reduce(0) { $0 + $1.count }
    }

    /// Called with the lock held; returns with it held. Looks for work
    /// without the lock (so producers never wait on a looking consumer) and
    /// yields the CPU, not busy-waits, so other runnable threads go first.
    private func spinWhileEmpty(_ firstLaneOnly: Bool) {
        guard takeable(firstLaneOnly) == 0 && !closed else { return }
        condition.unlock()
        let clock = ContinuousClock(), until = clock.now + spinBeforeSleep
        while visible.load(ordering: .acquiring) == 0 && clock.now < until {
            sched_yield()
        }
        condition.lock()
    }

    /// Refuses new work; consumers drain what is queued, then stop.
    /// - Parameter discardingQueued: drop what waits instead (for work that
    ///   is durable elsewhere or whose client is gone).
    /// - Returns: how many queued elements were dropped.
    @discardableResult
    public func close(discardingQueued: Bool = false) -> Int {
        condition.lock()
        closed = true
        var dropped = 0
        if discardingQueued {
            dropped = stored
            for i in lanes.indices {
                lanes[i] = Ring(slots: Array(repeating: nil, count: capacity))
            }
            stored = 0
        }
        condition.broadcast()
        condition.unlock()
        return dropped
    }

    /// Elements waiting now, in all lanes.
    public var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return stored
    }

    /// Elements waiting now in `lane` and the lanes taken before it: what a
    /// new element of `lane` would wait behind.
    public func count(throughLane lane: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return available(through: Swift.min(Swift.max(lane, 0), lanes.count - 1))
    }
}
