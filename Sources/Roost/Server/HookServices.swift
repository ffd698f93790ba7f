import HTTP
import Hooks
import JSON
import Jobs
import Logging
import Scripts
import Store
import Timing

/// The hook registry as the handlers use it: runs a write through its before
/// hooks inside the writer's savepoint, and after COMMIT queues its after
/// hooks and wakes the outbox dispatchers when the write added outbox events.
///
/// Built on an empty registry, so the built-in hooks that write through it
/// (messaging's threads, scripts) are registered with it in hand.
final class HookServices: Sendable {
    let registry: HookRegistry<any DocumentWriting>
    let after: AfterHookQueue<any DocumentWriting>
    /// Set (on the writer thread) when a hook wrote outbox events in the current batch.
    let outboxDirty: LockedBox<Bool>
    /// Wakes the webhook and push dispatchers (safe before they start).
    let wakeOutbox: @Sendable () -> Void
    /// Scripts' after hooks: whether some apply, and where committed writes go.
    let scripts: (any AfterScripts)?

    init(registry: HookRegistry<any DocumentWriting>, outboxDirty: LockedBox<Bool>, wakeOutbox: @escaping @Sendable () -> Void = {},
         scripts: (any AfterScripts)? = nil, logger: Logger) {
        self.registry = registry
        self.outboxDirty = outboxDirty
        self.wakeOutbox = wakeOutbox
        self.scripts = scripts
        after = AfterHookQueue(registry: registry, logger: logger)
    }

    /// After contexts a write (and the writes its hooks made) queue for after COMMIT.
    typealias Pending = LockedBox<[AfterContext]>

    /// Runs `write` (which stores the entity it is given and returns the
    /// stored JSON text) inside the before chain of `event`. A refusal
    /// becomes the client's error; the caller's savepoint undoes everything.
    /// Every write of an entity takes this path, the built-in ones (sign-up,
    /// profiles, threads) as much as a client's.
    func run(_ event: HookEvent, _ collection: String, id: String?, entity: JSONObject, isPatch: Bool = false,
             previous: JSONObject? = nil, requestID: String, scope: AccessScope, writer: any DocumentWriting,
             pending: Pending, write: (JSONObject) throws -> String) throws -> String {
        let context = WriteContext(event: event, collection: collection, id: id, actor: scope.principal.userID,
                                   actorRoles: scope.roles, privileged: scope.principal == .admin, requestID: requestID, work: writer,
                                   entity: entity, isPatch: isPatch, previous: previous)
        var text = ""
        // A `HookRefusal` propagates: it is an `HTTPErrorConvertible`.
        try registry.runBefore(context) {
            text = try write(context.entity)
            context.storedText = text
        }
        if let next = event.after, registry.hasAfterHooks(next, collection) || scripts?.hasAfterHooks(next, collection) == true {
            pending.set(pending.get() + [AfterContext(event: next, collection: collection, actor: scope.principal.userID, actorRoles: scope.roles,
                                                      requestID: requestID, entity: context.stored ?? JSONObject())])
        }
        return text
    }

    /// What to do once the write's transaction committed.
    func committed(_ pending: Pending) -> @Sendable () -> Void {
        { [self] in
            let contexts = pending.get()
            for context in contexts { after.dispatch(context) }
            if !contexts.isEmpty { scripts?.dispatchAfter(contexts) }
            notifyOutbox()
        }
    }

    /// Wakes delivery if this batch wrote outbox events.
    func notifyOutbox() {
        guard outboxDirty.get() else { return }
        outboxDirty.set(false)
        wakeOutbox()
    }
}

/// Scripts' after hooks as the hook path sees them (`RoostScripts`).
protocol AfterScripts: AnyObject, Sendable {
    /// Whether a loaded script has an after hook for `event` on `collection`.
    func hasAfterHooks(_ event: HookEvent, _ collection: String) -> Bool
    /// Queues the scripts' after hooks of committed writes.
    func dispatchAfter(_ contexts: [AfterContext])
}

/// Roost's built-in hooks, then the operator's, in one registry.
enum BuiltInHooks {
    /// The registry with no hooks yet, with the configured budget.
    static func emptyRegistry(config: RoostConfig, logger: Logger) -> HookRegistry<any DocumentWriting> {
        HookRegistry<any DocumentWriting>(defaultBudget: .milliseconds(config.hookBudgetMilliseconds), logger: logger)
    }

    /// Registers the built-in hooks, the scripts' and the operator's into `registry`.
    /// - Parameter services: the `HookServices` built on `registry`, for
    ///   built-in hooks that write other entities; nil only for listings.
    /// - Parameter scripts: registers the scripts' before hooks (`ScriptHooks`), when scripts run.
    static func register(into registry: HookRegistry<any DocumentWriting>, config: RoostConfig, settings: ReloadableSettings,
                         outboxDirty: LockedBox<Bool>, services: HookServices?,
                         scripts: ((HookRegistry<any DocumentWriting>) -> Void)? = nil) {
        if config.messaging.enabled {
            MessagingHooks(threads: config.messaging.threads, messages: config.messaging.messages, settings: settings,
                           outboxDirty: outboxDirty, services: services,
                           push: PushSender(config: config.push, outboxDirty: outboxDirty), alerts: config.push).register(into: registry)
        }
        WebhookOutboxHook(outboxDirty: outboxDirty).register(into: registry)
        scripts?(registry)
        OperatorHooks.register(into: registry)
    }

    /// The hooks and their order, one line each, as `roostd hooks` prints them.
    static func listing(_ registry: HookRegistry<any DocumentWriting>) -> String {
        registry.registrations.map(\.description).joined(separator: "\n")
    }

    /// The same as JSON, for `GET /admin/hooks`.
    static func listingJSON(_ registry: HookRegistry<any DocumentWriting>) -> String {
        JSONValue.array(registry.registrations.map { r in
            var o = JSONObject()
            o["id"] = .string(r.id)
            o["event"] = .string("\(r.event)")
            o["collection"] = r.collection.map { .string($0) } ?? .string("*")
            o["priority"] = .int(Int64(r.priority))
            o["budgetMs"] = r.budget.map { .int($0.wholeMilliseconds) } ?? .null
            o["source"] = .string(r.source)
            return .object(o)
        }).jsonText
    }
}

/// Where an operator registers their own hooks, in Swift. They run with the
/// built-in ones, ordered by priority then registration.
///
/// ```swift
/// registry.before(.beforeCreate, collection: "orders", id: "orders.total", priority: 10) { ctx, next in
///     guard ctx.entity["total"]?.doubleValue ?? 0 >= 0 else { throw HookRefusal(.invalidDocument, "total must not be negative") }
///     try next()
/// }
/// ```
enum OperatorHooks {
    static func register(into registry: HookRegistry<any DocumentWriting>) {}
}

extension RoostServer {
    /// The hooks `config` registers and their run order, one per line, then
    /// the handlers of its scripts with their file:line: what `roostd hooks` prints.
    public static func hookListing(config: RoostConfig, logger: Logger) throws -> String {
        let registry = BuiltInHooks.emptyRegistry(config: config, logger: logger)
        BuiltInHooks.register(into: registry, config: config, settings: ReloadableSettings(config), outboxDirty: LockedBox(false), services: nil)
        let scripts = try checkScripts(config: config, logger: logger)
        return ([BuiltInHooks.listing(registry)] + scripts.map { "script \($0)" }).joined(separator: "\n")
    }

    /// Compiles every script of `scripts_dir` and lists what each registers
    /// (`roostd check-scripts`); throws the first error with file:line.
    public static func checkScripts(config: RoostConfig, logger: Logger) throws -> [String] {
        try compileScripts(config: config, logger: logger).lines
    }

    /// What `scripts_dir` registers (one line each) and the bytes an idle Lua state with it loaded holds.
    public static func compileScripts(config: RoostConfig, logger: Logger) throws -> (lines: [String], idleStateBytes: Int) {
        let runtime = ScriptRuntime(limits: config.scriptLimits, environment: config.scriptEnvironment, logger: logger)
        let set = try runtime.compile(try ScriptFile.all(in: config.scriptsDir))
        return (set.registrations.map(\.description), set.idleStateBytes)
    }
}
