/// Thrown by a before hook to refuse the write with a status and a message
/// the client sees, e.g. `HookRefusal(403, "Forbidden", "You may only send as yourself.")`.
/// The request's unit of work is rolled back and no after hook fires.
public struct HookRefusal: Error, Sendable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String

    public init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// What the client sees when a hook throws something other than a refusal.
    static func failed(_ hook: String) -> HookRefusal {
        HookRefusal(500, "HookFailed", "The \(hook) hook failed; nothing was written.")
    }

    /// What the client sees when a before hook runs past its time budget.
    static func overran(_ hook: String) -> HookRefusal {
        HookRefusal(503, "HookTimeout", "The \(hook) hook ran past its time budget; nothing was written.")
    }
}
