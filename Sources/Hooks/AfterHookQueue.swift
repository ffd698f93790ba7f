import Foundation
import Jobs
import Logging
import Timing

/// Runs after hooks once their write has committed, on a few threads of
/// their own: a slow or failing hook never delays or fails a request.
///
/// Each hook runs with its budget: one that throws is logged with the
/// request id; one still running at its deadline is logged and left to
/// finish on its own while the queue moves on. A full queue drops the
/// event (logged), so the request never waits.
public final class AfterHookQueue<Work>: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    let registry: HookRegistry<Work>
    let pool: WorkerPool<Void, Job>
    let logger: Logger

    public init(registry: HookRegistry<Work>, threads: Int = 2, capacity: Int = 4096, logger: Logger) {
        self.registry = registry
        self.logger = logger
        pool = WorkerPool(name: "after-hooks", threads: threads, capacity: capacity, logger: logger,
                          makeContext: {}, run: { _, jobs in for job in jobs { job() } })
    }

    public func start() throws { try pool.start() }

    /// Lets queued hooks finish, then stops the threads.
    public func shutdown() { pool.shutdown() }

    /// Queues the after hooks for `context`. Never blocks.
    public func dispatch(_ context: AfterContext) {
        let hooks = registry.afterHooks(context.event, context.collection)
        guard !hooks.isEmpty else { return }
        let logger = self.logger
        let accepted = pool.submit {
            for hook in hooks { Self.run(hook.registration, hook.handler, context, logger) }
        }
        if !accepted {
            logger.error("after-hook queue full; event dropped", metadata: [
                "event": "\(context.event)", "collection": "\(context.collection)", "request_id": "\(context.requestID)"])
        }
    }

    /// Runs one hook on a thread of its own and waits at most its budget.
    static func run(_ r: HookRegistry<Work>.Registration, _ handler: @escaping HookRegistry<Work>.AfterHandler,
                    _ context: AfterContext, _ logger: Logger) {
        let done = DispatchSemaphore(value: 0)
        let metadata: Logger.Metadata = ["hook": "\(r.id)", "event": "\(r.event)", "collection": "\(context.collection)",
                                         "request_id": "\(context.requestID)"]
        // A thread of its own (not a shared pool a sleeping hook could starve),
        // so an overrunning hook can be left behind.
        NamedThread.start("after-hook", stackSize: 1 << 20) {
            do { try handler(context) } catch {
                var m = metadata
                m["error"] = "\(error)"
                logger.error("after hook threw", metadata: m)
            }
            done.signal()
        }
        guard let budget = r.budget else { return done.wait() }
        if done.wait(timeout: .now() + .nanoseconds(Int(budget.wholeNanoseconds))) == .timedOut {
            logger.error("after hook overran its budget; left running", metadata: metadata)
        }
    }
}
