import Hooks
import JSON
import Jobs
import Store

/// The built-in hook that turns writes into `<collection>.created|updated|deleted`
/// events: after the write, still inside its savepoint, it adds an outbox
/// row for each endpoint that asked for that type. A rolled-back write thus
/// leaves no event, and a committed one always has its event.
struct WebhookOutboxHook: Sendable {
    let outboxDirty: LockedBox<Bool>
    /// Last in the chain, so it sees the entity as stored.
    static let priority = 1000

    func register(into registry: HookRegistry<any DocumentWriting>) {
        let dirty = outboxDirty
        for event in [HookEvent.beforeCreate, .beforeUpdate, .beforeDelete] {
            registry.before(event, collection: nil, id: "webhooks.outbox", priority: Self.priority, source: HookSource.builtIn) { ctx, next in
                try next()
                guard let verb = ctx.event.pastTense else { return }
                let type = "\(ctx.collection).\(verb)"
                // Most writes have no subscriber: ask before touching the entity.
                guard try ctx.work.hasSubscribers(type) else { return }
                guard let data = ctx.storedJSON else { return }
                try ctx.work.enqueueEvent(type: type, data: data)
                dirty.set(true)
            }
        }
    }
}
