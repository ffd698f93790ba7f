/// One handler a script registered: what it answers to and where it is.
public struct ScriptRegistration: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case before, after, route, every, cron
    }

    public let kind: Kind
    /// create, update, delete, login (hooks); the method (routes); empty otherwise.
    public let event: String
    /// The collection or "*" (hooks), the function's name (routes), the schedule (jobs).
    public let target: String
    /// file:line of the registration.
    public let location: String
    /// The handler's registry reference in the state that loaded it.
    let ref: Int32

    var withoutRef: ScriptRegistration {
        ScriptRegistration(kind: kind, event: event, target: target, location: location, ref: 0)
    }

    public var description: String {
        switch kind {
        case .before, .after: return "\(kind) \(event) \(target) \(location)"
        case .route: return "route \(event) /fn/\(target) \(location)"
        case .every, .cron: return "\(kind) \(target) \(location)"
        }
    }

    /// Events a hook may name.
    static let beforeEvents: Set<String> = ["create", "update", "delete"]
    static let afterEvents: Set<String> = ["create", "update", "delete", "login"]
    static let methods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE"]
}

/// The scripts of one load: their files and what they registered. A reload
/// makes a new set; every thread's state follows at its next call.
public final class ScriptSet: Sendable {
    public let generation: Int
    public let files: [ScriptFile]
    public let registrations: [ScriptRegistration]
    /// Handler indexes by kind, event and target (looked up on every write: no key string is built).
    let index: [Key: [Int]]

    struct Key: Hashable {
        let kind: ScriptRegistration.Kind
        let event: String
        let target: String
    }
    /// Calls, errors and time per registration.
    public let stats: ScriptStats
    /// Bytes a Lua state holds with this set loaded, after a full collection
    /// (Lua's own count, `lua_gc(LUA_GCCOUNT)`), measured on the state that compiled it.
    public let idleStateBytes: Int

    init(generation: Int, files: [ScriptFile], registrations: [ScriptRegistration], idleStateBytes: Int = 0) {
        self.generation = generation
        self.idleStateBytes = idleStateBytes
        self.files = files
        self.registrations = registrations
        stats = ScriptStats(count: registrations.count)
        var index: [Key: [Int]] = [:]
        for (i, r) in registrations.enumerated() { index[Key(kind: r.kind, event: r.event, target: r.target), default: []].append(i) }
        self.index = index
    }

    static let empty = ScriptSet(generation: 0, files: [], registrations: [])

    /// The hooks for `event` on `collection` (its own, then "*"), in registration order.
    public func hooks(_ kind: ScriptRegistration.Kind, _ event: String, _ collection: String) -> [Int] {
        let own = index[Key(kind: kind, event: event, target: collection)] ?? []
        let any = index[Key(kind: kind, event: event, target: "*")] ?? []
        return any.isEmpty ? own : (own + any).sorted()
    }

    /// The function `/fn/<name>` for `method`.
    public func route(_ method: String, _ name: String) -> Int? { index[Key(kind: .route, event: method, target: name)]?.first }

    /// True when some function has this name (any method).
    public func hasRoute(named name: String) -> Bool {
        registrations.contains { $0.kind == .route && $0.target == name }
    }
}
