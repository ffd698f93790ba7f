import Foundation

extension NSLock {
    /// Runs `body` holding the lock. Foundation's own `withLock` needs
    /// macOS 14, iOS 17, tvOS 17 and watchOS 10 on Apple SDKs; this one runs
    /// on every platform the package declares.
    func critical<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
