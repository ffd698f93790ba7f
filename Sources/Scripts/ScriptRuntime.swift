import CLuaShim
import Foundation
import JSON
import Logging

/// The budgets every call runs under.
public struct ScriptLimits: Sendable {
    /// Most bytes one state may hold (`scripts.memory_mib`).
    public var memoryBytes: Int = 32 << 20
    /// Most bytes one call may add (a quarter of the state's).
    public var callBytes: Int { memoryBytes / 4 }
    public var hookNanoseconds: UInt64 = 250_000_000
    public var functionNanoseconds: UInt64 = 2_000_000_000
    public var jobNanoseconds: UInt64 = 30_000_000_000
    /// Loading one script (its top level) may take this long.
    public var loadTimeoutNanoseconds: UInt64 = 2_000_000_000

    public init() {}
}

/// Why a script's call did not complete, as the client's answer needs it.
public enum ScriptFailure: Error {
    /// ctx.refuse: the client gets this status, code and message.
    case refused(status: Int, code: String, message: String)
    /// Past its budget: 503 HookTimeout.
    case timedOut
    /// Raised, out of memory, or returned something that is not JSON: 500 ScriptError.
    case failed
    /// A roost.* call failed (a refusal further in, the store) and the script let it through.
    case passed(any Error)
}

/// Roost's scripts: the loaded set, one Lua state per thread that runs them,
/// and the calls Roost makes (before and after hooks, functions, jobs).
/// A reload compiles the new set on a fresh state first; only a set that
/// loads whole replaces the old one, and each thread's state follows at its next call.
public final class ScriptRuntime: @unchecked Sendable {
    public let limits: ScriptLimits
    let logger: Logger
    /// The variables roost.env may read (`scripts.env`), read once at start.
    let environment: [String: String]
    private let lock = NSLock()
    private var loaded = ScriptSet.empty
    private var generations = 0
    /// Hosts roost.http may reach (`scripts.http_allow`): exact names or `*.example.org`.
    let httpAllow: [String]
    /// Told of every call: the handler's kind, its outcome (ok, refused, error, timeout) and its time (metrics).
    public let observe: (@Sendable (String, String, UInt64) -> Void)?
    /// Each thread's state of this runtime.
    private let threadState = ThreadSlot<LuaState>()

    public init(limits: ScriptLimits, environment: [String: String] = [:], httpAllow: [String] = [], logger: Logger,
                observe: (@Sendable (String, String, UInt64) -> Void)? = nil) {
        self.httpAllow = httpAllow.map { $0.lowercased() }
        self.observe = observe
        self.limits = limits
        self.environment = environment
        self.logger = logger
        roost_lua_set_host(hostEntry)
    }

    /// The set in force.
    public var current: ScriptSet {
        lock.lock(); defer { lock.unlock() }
        return loaded
    }

    /// Compiles `files` on a fresh state: the set, or `ScriptError.load` naming file:line.
    public func compile(_ files: [ScriptFile]) throws -> ScriptSet {
        let generation: Int = { lock.lock(); defer { lock.unlock() }; generations += 1; return generations }()
        let state = try LuaState(runtime: self, set: ScriptSet(generation: generation, files: files, registrations: []))
        return ScriptSet(generation: generation, files: files, registrations: state.generationListing ?? [],
                         idleStateBytes: roost_lua_idle_memory(state.L))
    }

    /// Puts `set` in force.
    public func install(_ set: ScriptSet) {
        lock.lock(); defer { lock.unlock() }
        loaded = set
    }

    /// Loads `directory`'s scripts and puts them in force; on an error the old set stays and this throws.
    @discardableResult
    public func reload(directory: String) throws -> ScriptSet {
        let set = try compile(try ScriptFile.all(in: directory))
        install(set)
        return set
    }

    /// This thread's state for `set`, loaded on first use and after each reload.
    func state(for set: ScriptSet) throws -> LuaState {
        if let state = threadState.value, state.generation == set.generation { return state }
        threadState.value = nil
        let state = try LuaState(runtime: self, set: set)
        guard state.handlerRefs.count == set.registrations.count else {
            throw ScriptError.load("the scripts registered different handlers on a second load; register unconditionally")
        }
        threadState.value = state
        return state
    }

    /// Bytes this thread's state holds (nil before its first call).
    public func stateMemory() -> Int? {
        threadState.value.map { roost_lua_memory($0.L) }
    }
}
