import Foundation

/// At most one computation per key at a time: the first caller starts the
/// work, later callers for the same key wait for its result. Used so that a
/// burst of requests for the same thumbnail variant costs one resize.
public final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    public typealias Waiter = @Sendable (Value) -> Void

    // Guarded by `lock`.
    private let lock = NSLock()
    private var waiting: [Key: [Waiter]] = [:]

    public init() {}

    /// Adds `waiter` for `key`. When no computation for `key` is running,
    /// calls `start` with a `finish` closure that the work must call exactly
    /// once. If `start` returns `refused` (the pool is full), every waiter
    /// that joined gets `refused`.
    public func join(_ key: Key, refused: Value, waiter: @escaping Waiter,
                     start: (_ finish: @escaping @Sendable (Value) -> Void) -> Bool) {
        lock.lock()
        if waiting[key] != nil {
            waiting[key]!.append(waiter)
            lock.unlock()
            return
        }
        waiting[key] = [waiter]
        lock.unlock()
        let started = start { [self] value in finish(key, value) }
        if !started { finish(key, refused) }
    }

    private func finish(_ key: Key, _ value: Value) {
        lock.lock()
        let waiters = waiting.removeValue(forKey: key) ?? []
        lock.unlock()
        for w in waiters { w(value) }
    }

    /// Keys being computed now.
    public var inFlight: Int { lock.lock(); defer { lock.unlock() }; return waiting.count }
}
