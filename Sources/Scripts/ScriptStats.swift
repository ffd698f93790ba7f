import Foundation

/// Calls, failures and time of each handler of a set, for `roostd hooks`, the console and metrics.
public final class ScriptStats: @unchecked Sendable {
    public struct Entry: Sendable {
        public var calls = 0
        public var errors = 0
        public var timeouts = 0
        public var nanoseconds: UInt64 = 0
        public var lastRun: Int64 = 0
    }

    private let lock = NSLock()
    private var entries: [Entry]

    init(count: Int) { entries = Array(repeating: Entry(), count: count) }

    func record(_ index: Int, nanoseconds: UInt64, failed: Bool, timedOut: Bool) {
        lock.lock(); defer { lock.unlock() }
        guard entries.indices.contains(index) else { return }
        entries[index].calls += 1
        entries[index].nanoseconds += nanoseconds
        if failed { entries[index].errors += 1 }
        if timedOut { entries[index].timeouts += 1 }
        entries[index].lastRun = Int64(Date().timeIntervalSince1970)
    }

    public var all: [Entry] {
        lock.lock(); defer { lock.unlock() }
        return entries
    }
}
