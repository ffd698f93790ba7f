import JSON

/// An error the client is shown: every error type that reaches a client
/// (store, upload, hook refusal, …) conforms and says which `HTTPError` it is;
/// `HTTPError.response` is the one place such an error becomes bytes.
public protocol HTTPErrorConvertible: Error {
    var httpError: HTTPError { get }
}

/// An error the client should see, rendered as
/// `{"error": "<Code>", "description": "<sentence>", …fields}` with a fitting
/// status and any extra headers (`Retry-After`, `Allow`, `WWW-Authenticate`).
public struct HTTPError: HTTPErrorConvertible, Sendable {
    public let status: Int
    public let code: String
    public let description: String
    public var headers: Headers
    /// Further members of the body, after `error` and `description`.
    public var fields: JSONObject

    /// An error with one of Roost's codes, at that code's status.
    public init(_ code: ErrorCode, _ description: String, headers: Headers = Headers(), fields: JSONObject = JSONObject()) {
        self.init(status: code.status, code: code.rawValue, description, headers: headers, fields: fields)
    }

    /// An error with a code of the app's own (a hook's or script's refusal),
    /// or one passed on with its status (an operation inside a batch).
    public init(status: Int, code: String, _ description: String, headers: Headers = Headers(), fields: JSONObject = JSONObject()) {
        self.status = status
        self.code = code
        self.description = description
        self.headers = headers
        self.fields = fields
    }

    public var httpError: HTTPError { self }

    public var response: Response {
        var body = JSONObject()
        body["error"] = .string(code)
        body["description"] = .string(description)
        for (key, value) in fields { body[key] = value }
        var r = Response.json(status, body.jsonText)
        for h in headers { r.headers.add(h.name, h.value) }
        // Every 401 says how to authenticate (RFC 9110 §11.6.1).
        if status == 401 && headers["WWW-Authenticate"] == nil {
            r.headers.add("WWW-Authenticate", "Bearer realm=\"roost\"")
        }
        return r
    }

    public static func badRequest(_ d: String) -> HTTPError { HTTPError(.badRequest, d) }
    public static func notFound(_ d: String) -> HTTPError { HTTPError(.notFound, d) }
    public static func methodNotAllowed(_ method: Request.Method, allow: String) -> HTTPError {
        HTTPError(.methodNotAllowed, "\(method.rawValue) is not allowed here; use \(allow).", headers: Headers([("Allow", allow)]))
    }
    public static func conflict(_ d: String) -> HTTPError { HTTPError(.conflict, d) }
    public static func tooLarge(limit: Int) -> HTTPError {
        HTTPError(.payloadTooLarge, "The request body is larger than the limit of \(limit) bytes.")
    }
    public static func unsupportedMediaType(_ d: String) -> HTTPError { HTTPError(.unsupportedMediaType, d) }
    public static func overloaded(retryAfter: Int = 1) -> HTTPError {
        HTTPError(.overloaded, "The server is busy; retry shortly.", headers: Headers([("Retry-After", "\(retryAfter)")]))
    }
    public static func internalError(_ d: String) -> HTTPError { HTTPError(.internalError, d) }
}
