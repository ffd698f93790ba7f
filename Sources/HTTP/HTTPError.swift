import JSON

/// An error that knows the response it becomes.
public protocol ResponseError: Error {
    var response: Response { get }
}

/// An error the client should see, rendered as
/// `{"error": "<Code>", "description": "<sentence>"}` with a fitting status.
public struct HTTPError: ResponseError, Sendable {
    public let status: Int
    public let code: String
    public let description: String
    public var headers: Headers

    public init(_ status: Int, _ code: String, _ description: String, headers: Headers = Headers()) {
        self.status = status
        self.code = code
        self.description = description
        self.headers = headers
    }

    public var response: Response {
        var body = JSONObject()
        body["error"] = .string(code)
        body["description"] = .string(description)
        var r = Response.json(status, body.jsonText)
        for h in headers { r.headers.add(h.name, h.value) }
        // Every 401 says how to authenticate (RFC 9110 §11.6.1).
        if status == 401 && headers["WWW-Authenticate"] == nil {
            r.headers.add("WWW-Authenticate", "Bearer realm=\"roost\"")
        }
        return r
    }

    public static func badRequest(_ d: String) -> HTTPError { HTTPError(400, "BadRequest", d) }
    public static func notFound(_ d: String) -> HTTPError { HTTPError(404, "NotFound", d) }
    public static func methodNotAllowed(_ method: Request.Method, allow: String) -> HTTPError {
        HTTPError(405, "MethodNotAllowed", "\(method.rawValue) is not allowed here; use \(allow).", headers: Headers([("Allow", allow)]))
    }
    public static func conflict(_ d: String) -> HTTPError { HTTPError(409, "Conflict", d) }
    public static func tooLarge(limit: Int) -> HTTPError {
        HTTPError(413, "PayloadTooLarge", "The request body is larger than the limit of \(limit) bytes.")
    }
    public static func unsupportedMediaType(_ d: String) -> HTTPError { HTTPError(415, "UnsupportedMediaType", d) }
    public static func overloaded(retryAfter: Int = 1) -> HTTPError {
        HTTPError(503, "Overloaded", "The server is busy; retry shortly.", headers: Headers([("Retry-After", "\(retryAfter)")]))
    }
    public static func internalError(_ d: String) -> HTTPError { HTTPError(500, "InternalError", d) }
}
