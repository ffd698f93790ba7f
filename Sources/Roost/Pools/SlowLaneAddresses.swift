import Daemon
import Foundation
import Synchronization
import Timing

/// Client addresses (IPv4, or an IPv6 /64) whose read ran past its slice on
/// a reader lately: their reads start on the slow lane for `penalty`
/// seconds, so one client sending heavy queries one after another cannot
/// keep every reader busy for a slice each; it only queues behind itself.
///
/// Consulted on the event loop for every read, so the common case (nobody
/// listed) is one atomic load: no lock the loops would share. At most `capacity`
/// addresses are held; past it the entry that expires first makes room.
final class SlowLaneAddresses: @unchecked Sendable {
    let penalty: Double
    let capacity: Int
    private let lock = NSLock()
    private var until: [String: UInt64] = [:] { didSet { listed.store(until.count, ordering: .releasing) } }
    /// `until.count`, read without the lock.
    private let listed = Atomic<Int>(0)

    init(penalty: Double = 10, capacity: Int = 4096) {
        self.penalty = penalty
        self.capacity = capacity
    }

    /// Lists `address` (a read of its just ran past its slice).
    func overran(_ address: String) {
        guard !address.isEmpty else { return }
        let key = LoginThrottle.addressKey(address)
        let now = monotonicNanoseconds()
        let expiry = now + UInt64(penalty * 1e9)
        lock.withLock {
            if until[key] == nil, until.count >= capacity {
                until = until.filter { $0.value > now }
                if until.count >= capacity, let first = until.min(by: { $0.value < $1.value }) { until[first.key] = nil }
            }
            until[key] = expiry
        }
    }

    /// True when `address` overran a slice within the last `penalty` seconds.
    func isListed(_ address: String) -> Bool {
        if listed.load(ordering: .acquiring) == 0 || address.isEmpty { return false }
        let key = LoginThrottle.addressKey(address)
        let now = monotonicNanoseconds()
        return lock.withLock {
            guard let expiry = until[key] else { return false }
            if expiry > now { return true }
            until[key] = nil
            return false
        }
    }
}
