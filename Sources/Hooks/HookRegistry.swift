import Foundation
import Logging
import Timing

/// Business-logic hooks by event and collection, in a defined order:
/// priority (lower first), then registration order.
///
/// Before hooks chain like middleware: each gets the context and `next`,
/// which runs the rest of the chain and finally the write itself, so a hook
/// can act before the write, after it (still inside the unit of work), or
/// refuse by throwing a `HookRefusal`. After hooks run after COMMIT on an
/// `AfterHookQueue`.
///
/// The registry knows nothing of users or messages; `Work` is whatever the
/// caller's unit of work is (Roost passes its SQLite writer).
///
/// ```swift
/// registry.before(.beforeCreate, collection: "messages", id: "messaging.sender", priority: 10) { ctx, next in
///     guard ctx.entity["senderId"] == .string(ctx.actor ?? "") else { throw HookRefusal(.forbidden, "…") }
///     try next()
/// }
/// ```
public final class HookRegistry<Work>: @unchecked Sendable {
    /// A chained before handler: call `next()` to run the rest and the write.
    public typealias BeforeHandler = (WriteContext<Work>, _ next: () throws -> Void) throws -> Void
    /// An after handler; runs on a queue thread.
    public typealias AfterHandler = @Sendable (AfterContext) throws -> Void

    /// One registered hook, as `roostd hooks` lists it.
    public struct Registration: Sendable, CustomStringConvertible {
        public let id: String
        public let event: HookEvent
        /// nil: every collection.
        public let collection: String?
        public let priority: Int
        /// nil: none. Built-in hooks only read and write the store, whose own
        /// time limits bound them; a loaded database is not a hook overrunning.
        public let budget: Duration?
        /// "built-in" or "operator".
        public let source: String
        /// Registration order, the tie-breaker after priority.
        public let sequence: Int

        public var description: String {
            let limit = budget.map { "\($0.wholeMilliseconds)ms" } ?? "none"
            return "\(event) \(collection ?? "*") priority=\(priority) budget=\(limit) \(id) (\(source))"
        }
    }

    struct Before {
        let registration: Registration
        let handler: BeforeHandler
    }

    struct After {
        let registration: Registration
        let handler: AfterHandler
    }

    struct ChainKey: Hashable {
        let event: HookEvent
        let collection: String
    }

    private let lock = NSLock()
    private var befores: [Before] = []
    private var afters: [After] = []
    private var sequence = 0
    /// The hooks for each (event, collection) asked about so far; emptied on every registration.
    private var beforeChains: [ChainKey: [Before]] = [:]
    private var afterChains: [ChainKey: [After]] = [:]
    let logger: Logger
    /// The budget of hooks registered without one.
    public let defaultBudget: Duration

    public init(defaultBudget: Duration = .milliseconds(250), logger: Logger) {
        self.defaultBudget = defaultBudget
        self.logger = logger
    }

    /// Registers a before hook (`beforeCreate`, `beforeUpdate`, `beforeDelete`).
    /// - Parameters:
    ///   - collection: the collection it applies to; nil for every collection.
    ///   - priority: lower runs first (further out in the chain).
    ///   - budget: the most time the hook itself may take; past it the write is refused.
    ///   - source: `HookSource.builtIn` hooks have no budget (see `Registration.budget`).
    public func before(_ event: HookEvent, collection: String?, id: String, priority: Int = 0, budget: Duration? = nil,
                       source: String = "operator", _ handler: @escaping BeforeHandler) {
        precondition(event.isBefore, "\(event) is not a before event")
        lock.lock(); defer { lock.unlock() }
        sequence += 1
        befores.append(Before(registration: Registration(id: id, event: event, collection: collection, priority: priority,
                                                         budget: self.budget(budget, source), source: source, sequence: sequence),
                              handler: handler))
        befores.sort { Self.ordered($0.registration, $1.registration) }
        beforeChains.removeAll()
    }

    /// Registers an after hook (`afterCreate`, `afterUpdate`, `afterDelete`, `afterLogin`).
    public func after(_ event: HookEvent, collection: String?, id: String, priority: Int = 0, budget: Duration? = nil,
                      source: String = "operator", _ handler: @escaping AfterHandler) {
        precondition(!event.isBefore, "\(event) is not an after event")
        lock.lock(); defer { lock.unlock() }
        sequence += 1
        afters.append(After(registration: Registration(id: id, event: event, collection: collection, priority: priority,
                                                       budget: self.budget(budget, source), source: source, sequence: sequence),
                            handler: handler))
        afters.sort { Self.ordered($0.registration, $1.registration) }
        afterChains.removeAll()
    }

    /// Built-in hooks' budget is none; others get `budget`, else `defaultBudget`.
    private func budget(_ budget: Duration?, _ source: String) -> Duration? {
        source == HookSource.builtIn ? nil : budget ?? defaultBudget
    }

    static func ordered(_ a: Registration, _ b: Registration) -> Bool {
        (a.priority, a.sequence) < (b.priority, b.sequence)
    }

    /// Every hook, by event then run order.
    public var registrations: [Registration] {
        lock.lock(); defer { lock.unlock() }
        let all = befores.map(\.registration) + afters.map(\.registration)
        let rank = Dictionary(uniqueKeysWithValues: HookEvent.all.enumerated().map { ($1, $0) })
        return all.sorted { (rank[$0.event] ?? 0, $0.priority, $0.sequence) < (rank[$1.event] ?? 0, $1.priority, $1.sequence) }
    }

    /// The before hooks for `event` on `collection`, in run order.
    func beforeHooks(_ event: HookEvent, _ collection: String) -> [Before] {
        lock.lock(); defer { lock.unlock() }
        return Self.chain(ChainKey(event: event, collection: collection), of: befores, cache: &beforeChains) { $0.registration }
    }

    /// The after hooks for `event` on `collection`, in run order.
    func afterHooks(_ event: HookEvent, _ collection: String) -> [After] {
        lock.lock(); defer { lock.unlock() }
        return Self.chain(ChainKey(event: event, collection: collection), of: afters, cache: &afterChains) { $0.registration }
    }

    /// The hooks of `all` that apply to `key`, in run order, looked up once
    /// per key and then served from `cache`. Call with `lock` held.
    private static func chain<Hook>(_ key: ChainKey, of all: [Hook], cache: inout [ChainKey: [Hook]],
                                    _ registration: (Hook) -> Registration) -> [Hook] {
        if let cached = cache[key] { return cached }
        let chain = all.filter {
            let r = registration($0)
            return r.event == key.event && (r.collection ?? key.collection) == key.collection
        }
        cache[key] = chain
        return chain
    }

    /// True when some before hook applies: callers skip the hook path otherwise.
    public func hasBeforeHooks(_ event: HookEvent, _ collection: String) -> Bool { !beforeHooks(event, collection).isEmpty }

    /// True when some after hook applies.
    public func hasAfterHooks(_ event: HookEvent, _ collection: String) -> Bool { !afterHooks(event, collection).isEmpty }
}

/// Where a hook comes from (`Registration.source`).
public enum HookSource {
    /// Roost's own hooks: they only read and write the store and have no budget.
    public static let builtIn = "built-in"
}
