import Foundation

/// One object per thread, in a POSIX thread-specific slot: a read is a few
/// nanoseconds, where `Thread.current.threadDictionary` hashes and bridges its
/// key on every call (a measurable share of a before hook's cost on the writer).
/// The thread's object is released when the thread ends or another replaces it.
public final class ThreadSlot<Value: AnyObject>: @unchecked Sendable {
    private var key = pthread_key_t()

    public init() {
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
    }

    /// This thread's object, if it has one.
    public var value: Value? {
        get {
            guard let pointer = pthread_getspecific(key) else { return nil }
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        set {
            let old = pthread_getspecific(key)
            pthread_setspecific(key, newValue.map { Unmanaged.passRetained($0).toOpaque() })
            if let old { Unmanaged<Value>.fromOpaque(old).release() }
        }
    }
}

/// A counter one thread keeps in a `ThreadSlot` (changed in place, no slot write).
public final class ThreadCounter {
    public var count = 0
    public init() {}
}
