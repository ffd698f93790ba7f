import Foundation
import Logging

extension HookRegistry {
    /// Runs the before chain for `context`, ending in `write`, which must
    /// store `context.entity` and set `context.stored`.
    ///
    /// A hook that refuses, throws or overruns its budget stops the chain:
    /// this throws a `HookRefusal` (the caller rolls back its unit of work),
    /// or the store's own error when the store failed under it (`StoreErrorInHook`).
    /// Errors thrown by `write` itself come back unchanged.
    public func runBefore(_ context: WriteContext<Work>, write: () throws -> Void) throws {
        let hooks = beforeHooks(context.event, context.collection)
        try step(0, hooks, context, write)
    }

    private func step(_ index: Int, _ hooks: [Before], _ context: WriteContext<Work>, _ write: () throws -> Void) throws {
        guard index < hooks.count else { return try write() }
        let hook = hooks[index]
        let started = ContinuousClock.now
        let othersClock = context.work as? any WorkOnOthersBehalf
        let othersAtStart = othersClock?.timeOnOthersBehalf ?? .zero
        var inner: Duration = .zero
        var othersInside: Duration = .zero
        var innerError: (any Error)?
        var nextCalled = false
        do {
            try hook.handler(context) {
                guard !nextCalled else { return }
                nextCalled = true
                let t0 = ContinuousClock.now
                let others0 = othersClock?.timeOnOthersBehalf ?? .zero
                defer {
                    inner += ContinuousClock.now - t0
                    othersInside += (othersClock?.timeOnOthersBehalf ?? .zero) - others0
                }
                do { try step(index + 1, hooks, context, write) } catch {
                    innerError = error
                    throw error
                }
            }
        } catch {
            // Errors from further in (a later hook, or the write) pass through as they are.
            if let innerError { throw innerError }
            if let failure = error as? any StoreErrorInHook, failure.isStoreFailure {
                logger.warning("hook met a store error", metadata: meta(hook.registration, context, ["error": "\(error)"]))
                throw error
            }
            if let refusal = error as? HookRefusal {
                logger.info("hook refused the write", metadata: meta(hook.registration, context, ["refusal": "\(refusal)"]))
                throw refusal
            }
            logger.error("hook threw", metadata: meta(hook.registration, context, ["error": "\(error)"]))
            throw HookRefusal.failed(hook.registration.id)
        }
        if let innerError { throw innerError }
        let others = (othersClock?.timeOnOthersBehalf ?? .zero) - othersAtStart - othersInside
        let own = ContinuousClock.now - started - inner - others
        if let budget = hook.registration.budget, own > budget {
            logger.error("hook overran its budget", metadata: meta(hook.registration, context, ["elapsed": "\(own)"]))
            throw HookRefusal.overran(hook.registration.id)
        }
        if !nextCalled {
            // A hook that neither refuses nor continues would silently drop the write.
            logger.error("hook did not call next", metadata: meta(hook.registration, context, [:]))
            throw HookRefusal.failed(hook.registration.id)
        }
    }

    func meta(_ r: Registration, _ context: WriteContext<Work>, _ extra: Logger.Metadata) -> Logger.Metadata {
        var m: Logger.Metadata = ["hook": "\(r.id)", "event": "\(r.event)", "collection": "\(context.collection)",
                                  "request_id": "\(context.requestID)"]
        m.merge(extra) { _, new in new }
        return m
    }
}
