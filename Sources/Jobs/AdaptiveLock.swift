#if canImport(Glibc)
import Glibc
#endif

/// A mutex that spins briefly before it sleeps (glibc's adaptive mutex), with
/// a condition variable on it. The queues between loops and workers hold it
/// for a few instructions (a ring push or pop, an array swap): a thread that
/// finds it taken usually gets it within the spin, with no futex call and no
/// sleep, where `NSLock`/`NSCondition` (plain mutexes) sleep at once.
public final class AdaptiveLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// glibc's PTHREAD_MUTEX_ADAPTIVE_NP (a GNU extension the Swift overlay does not name).
    private static let adaptive: Int32 = 3

    public init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Self.adaptive)
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Sleeps until signalled (the lock held, released while asleep, held again after).
    public func wait() { pthread_cond_wait(condition, mutex) }
    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
