import Foundation

/// A fixed-capacity FIFO shared by producer threads (event loops) and
/// consumer threads (workers). `offer` never blocks: a full queue says no,
/// and the caller answers 503 instead of piling up work.
public final class BoundedQueue<Element>: @unchecked Sendable {
    // Guarded by `condition`. NSCondition is a pthread mutex + condvar, which
    // ThreadSanitizer understands.
    private let condition = NSCondition()
    private var ring: [Element?]
    private var head = 0
    private var stored = 0
    private var closed = false

    public let capacity: Int

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        ring = Array(repeating: nil, count: capacity)
    }

    /// Adds `element` unless the queue is full or closed.
    /// - Returns: false when refused.
    public func offer(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, stored < capacity else { return false }
        ring[(head + stored) % capacity] = element
        stored += 1
        condition.signal()
        return true
    }

    /// Waits for work and takes up to `max` elements.
    /// - Returns: nil once the queue is closed and drained.
    public func take(max: Int) -> [Element]? {
        condition.lock()
        defer { condition.unlock() }
        while stored == 0 && !closed { condition.wait() }
        if stored == 0 { return nil }
        let n = Swift.min(max, stored)
        var out: [Element] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            out.append(ring[head]!)
            ring[head] = nil
            head = (head + 1) % capacity
        }
        stored -= n
        return out
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
            for i in 0..<stored { ring[(head + i) % capacity] = nil }
            stored = 0
        }
        condition.broadcast()
        condition.unlock()
        return dropped
    }

    /// Elements waiting now.
    public var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return stored
    }
}
