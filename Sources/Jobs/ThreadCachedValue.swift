import Foundation
import Synchronization

/// A value every request reads and almost nothing changes (the reloadable
/// settings). Each thread keeps its own copy and checks it against an atomic
/// version with one plain load, so a read takes no lock and writes no shared
/// memory: two event loops reading it never wait on each other (a shared lock
/// there cost a futex call on most requests). A change takes the lock, then
/// moves the version on; each thread copies the new value at its next read.
public final class ThreadCachedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    private let version = Atomic<UInt64>(1)
    private var key = pthread_key_t()

    /// One thread's copy and the version it was taken at.
    private final class Copy {
        let version: UInt64
        let value: Value
        init(version: UInt64, value: Value) {
            self.version = version
            self.value = value
        }
    }

    public init(_ value: Value) {
        self.value = value
        // A thread's copy is released when the thread ends.
        pthread_key_create(&key) { copy in
            if let copy { Unmanaged<AnyObject>.fromOpaque(copy).release() }
        }
    }

    /// Runs `body` with this thread's copy of the value (copied afresh after a change).
    public func read<Result>(_ body: (Value) throws -> Result) rethrows -> Result {
        let now = version.load(ordering: .acquiring)
        if let stored = pthread_getspecific(key) {
            let copy = Unmanaged<Copy>.fromOpaque(stored).takeUnretainedValue()
            if copy.version == now { return try body(copy.value) }
            Unmanaged<Copy>.fromOpaque(stored).release()
        }
        lock.lock()
        let fresh = Copy(version: version.load(ordering: .relaxed), value: value)
        lock.unlock()
        pthread_setspecific(key, Unmanaged.passRetained(fresh).toOpaque())
        return try body(fresh.value)
    }

    /// Changes the value under the lock; every thread sees the change at its next read.
    @discardableResult
    public func update<Result>(_ change: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        let result = try change(&value)
        version.add(1, ordering: .releasing)
        return result
    }
}
