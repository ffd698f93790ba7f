import HTTP

/// Thrown by a before hook to refuse the write with a status and a message
/// the client sees, e.g. `HookRefusal(.forbidden, "You may only send as yourself.")`.
/// The request's unit of work is rolled back and no after hook fires.
///
/// Built-in and operator hooks refuse with an `ErrorCode`, so the status is
/// the one that code is declared with. Scripts (`ctx.refuse(status, code,
/// message)`) may name codes of the app's own: a 4xx status and a word
/// (`appCodeProblem` says what is wrong otherwise); a script naming one of
/// Roost's codes must use that code's status, so a code keeps one status.
public struct HookRefusal: Error, Sendable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String
    /// Headers the answer carries (a budget's refusal: `Retry-After`).
    public let headers: Headers

    /// A refusal with one of Roost's codes, at that code's status.
    public init(_ code: ErrorCode, _ message: String) {
        self.init(status: code.status, code: code.rawValue, message: message)
    }

    /// A refusal with a code of the app's own (a script's), which
    /// `appCodeProblem(status:code:)` has accepted.
    public init(status: Int, appCode: String, _ message: String) {
        assert(Self.appCodeProblem(status: status, code: appCode) == nil, "unchecked app refusal \(status) \(appCode)")
        self.init(status: status, code: appCode, message: message)
    }

    /// An error passed on as it is (a script's from a roost.* call, a caller's spent budget), with its status, code and headers.
    public init(passing error: HTTPError) {
        self.init(status: error.status, code: error.code, message: error.description, headers: error.headers)
    }

    private init(status: Int, code: String, message: String, headers: Headers = Headers()) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// Why a script's refusal cannot be answered as given, or nil when it can:
    /// a status from 400 to 499, a code of letters, digits, `-` and `_` (at
    /// most 64), and one of Roost's codes only at its own status.
    public static func appCodeProblem(status: Int, code: String) -> String? {
        guard (400...499).contains(status) else { return "status must be a whole number from 400 to 499" }
        guard !code.isEmpty, code.utf8.count <= 64,
              code.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") })
        else { return "code must be letters and digits, like InvalidDocument" }
        if let known = ErrorCode(rawValue: code), known.status != status {
            return "\(code) is Roost's code for status \(known.status); use that status or a code of your own"
        }
        return nil
    }

    /// What the client sees when a hook throws something other than a refusal.
    static func failed(_ hook: String) -> HookRefusal {
        HookRefusal(.hookFailed, "The \(hook) hook failed; nothing was written.")
    }

    /// What the client sees when a before hook runs past its time budget.
    static func overran(_ hook: String) -> HookRefusal {
        HookRefusal(.hookTimeout, "The \(hook) hook ran past its time budget; nothing was written.")
    }
}
