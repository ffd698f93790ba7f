import JSON

/// Who runs a script's call: the request's caller (nil id when anonymous).
public struct ScriptCaller: Sendable {
    public let id: String?
    public let admin: Bool

    public init(id: String?, admin: Bool) {
        self.id = id
        self.admin = admin
    }

    public static let system = ScriptCaller(id: nil, admin: true)

    var json: JSONObject {
        var o = JSONObject()
        if let id { o["id"] = .string(id) }
        o["admin"] = .bool(admin)
        return o
    }
}

/// What the roost.* data calls do, given by the place a script runs: inside
/// the writer's transaction (before hooks), or on a worker (after hooks,
/// functions, jobs). `system` is true inside `roost.as_system`.
public protocol ScriptServices: AnyObject {
    func get(_ collection: String, _ id: String, system: Bool) throws -> JSONValue?
    func find(_ collection: String, filter: JSONValue, sort: JSONValue?, limit: Int, system: Bool) throws -> [JSONValue]
    func count(_ collection: String, filter: JSONValue, system: Bool) throws -> Int
    func create(_ collection: String, _ entity: JSONObject, system: Bool) throws -> JSONValue
    func update(_ collection: String, _ id: String, _ patch: JSONObject, system: Bool) throws -> JSONValue
    func delete(_ collection: String, _ id: String, system: Bool) throws
    /// Runs `body` with every write in one transaction.
    func transaction(_ body: () throws -> Void) throws
    func webhook(_ event: String, _ data: JSONValue) throws
    func push(_ userID: String, _ notification: JSONObject) throws
    /// Whether roost.http may run here (never inside the writer's transaction).
    var allowsHTTP: Bool { get }
}

/// A roost.* call the store or a hook refused, as the script sees it and as
/// the client gets it when the script lets it through.
public struct ScriptServiceError: Error, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String
    /// The error to answer with when the script does not catch it.
    public let underlying: any Error

    public init(status: Int, code: String, message: String, underlying: any Error) {
        self.status = status
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(status) \(code): \(message)" }
}

/// The running call of a state: its caller, services and what it asked for.
public final class ScriptCall {
    public let requestID: String
    public let caller: ScriptCaller
    let services: (any ScriptServices)?
    /// Inside roost.as_system.
    var system = false
    /// Set by ctx.refuse; final even if the script catches the error.
    var refusal: HookRefusalValue?
    /// The last roost.* call that failed, and the text the script saw.
    var failure: (any Error)?
    var failureText = "\u{0}"

    public init(requestID: String, caller: ScriptCaller, services: (any ScriptServices)?) {
        self.requestID = requestID
        self.caller = caller
        self.services = services
    }
}
