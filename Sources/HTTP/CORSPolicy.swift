/// Cross-origin resource sharing (`cors.origins`, `cors.credentials`): which
/// web origins may call the API from a browser, and the headers that say so.
/// Applied by the HTTP server to every response (errors, live streams and
/// file downloads included) and answering preflights itself.
public struct CORSPolicy: Sendable, Equatable {
    /// Allowed origins (`https://app.example.com`), or `*` for any.
    public let origins: Set<String>
    /// Whether browsers may send cookies or HTTP authentication (`Access-Control-Allow-Credentials`).
    public let credentials: Bool

    public static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
    public static let allowedHeaders = "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id, Accept"
    public static let exposedHeaders = "ETag, X-Roost-Next, X-Roost-Cursor, X-Total-Count, X-Request-Id, Retry-After, Location"
    /// Seconds a browser may cache a preflight's answer.
    public static let maxAge = "600"

    /// nil when no origin is allowed (CORS off: browsers keep their same-origin rule).
    public init?(origins: [String], credentials: Bool) {
        guard !origins.isEmpty else { return nil }
        self.origins = Set(origins.map(Self.normalized))
        self.credentials = credentials
    }

    /// An origin as browsers send it: no trailing slash, lower-case scheme and host.
    static func normalized(_ origin: String) -> String {
        var text = String(origin.lowercased().drop(while: { $0 == " " }))
        while text.hasSuffix(" ") { text.removeLast() }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// Whether `origin` (the request's `Origin` header) may read responses.
    public func allows(_ origin: String) -> Bool {
        origins.contains("*") || origins.contains(Self.normalized(origin))
    }

    /// The headers of an actual (non-preflight) response to a request from `origin`:
    /// `Vary: Origin` always, the allow and expose headers when the origin is allowed.
    public func responseHeaders(origin: String?) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [("Vary", "Origin")]
        guard let origin, allows(origin) else { return headers }
        // With credentials a browser refuses `*`: the origin itself is echoed.
        let wildcard = origins.contains("*") && !credentials
        headers.append(("Access-Control-Allow-Origin", wildcard ? "*" : origin))
        if credentials { headers.append(("Access-Control-Allow-Credentials", "true")) }
        headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        return headers
    }

    /// Whether a request is a preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`.
    public static func isPreflight(_ request: Request) -> Bool {
        request.method == .options && request.headers["Origin"] != nil
            && request.headers["Access-Control-Request-Method"] != nil
    }

    /// The answer to a preflight: 204 with the allowed methods and headers,
    /// or 403 naming the setting when the origin is not allowed.
    public func preflight(_ request: Request) -> Response {
        let origin = request.headers["Origin"] ?? ""
        guard allows(origin) else {
            return HTTPError(.originNotAllowed, "This origin may not call the API from a browser: add it to cors.origins in the daemon's config").response
        }
        return Response(status: 204, headers: Headers([
            ("Access-Control-Allow-Methods", Self.allowedMethods),
            ("Access-Control-Allow-Headers", Self.allowedHeaders),
            ("Access-Control-Max-Age", Self.maxAge),
        ]))
    }
}
