import Foundation
import Jobs

/// The thread an outbox dispatcher runs on (webhooks, push): it opens its
/// context (a read connection, a client) on that thread, then runs passes
/// until shutdown. Each pass reads what is due, hands it on and returns how
/// long to sleep; a `wake` (a commit that queued deliveries, a finished
/// delivery) cuts the sleep short, and shutdown ends it.
public final class OutboxLoop<Context>: @unchecked Sendable {
    /// One pass over the outbox: the milliseconds to sleep unless woken (0 or less: the next pass at once).
    public typealias Pass = @Sendable (Context) -> Int64

    let name: String
    /// Whether the thread runs at `NamedThread.backgroundNice` (no request waits for it).
    let background: Bool
    private let condition = NSCondition()
    private var stopped = false
    private var woken = false
    private let finished = DispatchGroup()

    /// - Parameter name: the thread's name.
    /// - Parameter background: run at a lower priority than the request path (`NamedThread`).
    public init(name: String, background: Bool = false) {
        self.name = name
        self.background = background
    }

    /// Opens the context on the loop's thread and runs `pass` there; a
    /// failure to open is thrown here and no thread stays.
    public func start(open: @escaping @Sendable () throws -> Context, pass: @escaping Pass) throws {
        let opened = DispatchSemaphore(value: 0)
        let failure = LockedBox<(any Error)?>(nil)
        finished.enter()
        NamedThread.start(name, background: background) { [self] in
            defer { finished.leave() }
            let context: Context
            do { context = try open() } catch {
                failure.set(error)
                opened.signal()
                return
            }
            opened.signal()
            run(context, pass)
        }
        opened.wait()
        if let error = failure.get() { throw error }
    }

    /// Ends the loop after the pass in hand and waits for its thread.
    public func shutdown() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        finished.wait()
    }

    /// Starts the next pass now rather than after the sleep.
    public func wake() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    public var isStopped: Bool { condition.lock(); defer { condition.unlock() }; return stopped }

    private func run(_ context: Context, _ pass: Pass) {
        while true {
            condition.lock()
            if stopped { condition.unlock(); return }
            woken = false
            condition.unlock()
            let waitMilliseconds = pass(context)
            if waitMilliseconds <= 0 { continue }
            condition.lock()
            if !stopped && !woken {
                _ = condition.wait(until: Date().addingTimeInterval(Double(max(waitMilliseconds, 5)) / 1000))
            }
            condition.unlock()
        }
    }
}
