/// An HTTP request as the app sees it: parsed on the event loop, then
/// handed to a worker. Immutable and `Sendable`.
public struct Request: Sendable {
    public let method: Method
    /// The raw path, e.g. `/locations/abc`.
    public let path: String
    /// Percent-decoded path segments, e.g. `["locations", "abc"]`.
    public let segments: [String]
    /// Decoded query parameters; the first value wins for repeated names.
    public let query: [String: String]
    public let headers: Headers
    public let body: [UInt8]
    /// The client's `X-Request-Id`, or one made for this request.
    public let requestID: String
    /// The peer's IP address, for throttling and logs.
    public let remoteAddress: String
    /// The template of the route that owns the path, once the router matched it.
    public private(set) var routeTemplate: String?
    /// The matched route's named parameters and their segment positions.
    private var parameterPositions: [String: Int] = [:]

    public init(method: Method, path: String, segments: [String], query: [String: String],
                headers: Headers, body: [UInt8], requestID: String, remoteAddress: String = "") {
        self.remoteAddress = remoteAddress
        self.method = method
        self.path = path
        self.segments = segments
        self.query = query
        self.headers = headers
        self.body = body
        self.requestID = requestID
    }

    /// This request as matched by `route`: its template and named parameters.
    public func matched<Handler>(_ route: Route<Handler>) -> Request {
        var copy = self
        copy.routeTemplate = route.template
        copy.parameterPositions = route.parameters
        return copy
    }

    /// The decoded path segment of the matched route's parameter `name`
    /// (`request.parameter("id")` for `/users/:id`). Asking for a name the route does
    /// not declare is a programming error.
    public func parameter(_ name: String) -> String {
        guard let i = parameterPositions[name], i < segments.count else {
            preconditionFailure("the route \(routeTemplate ?? "(none)") has no parameter :\(name)")
        }
        return segments[i]
    }

    /// The token of an `Authorization: Bearer <token>` header, if any.
    public var bearerToken: String? {
        guard let value = headers["Authorization"], value.count > 7,
              value.prefix(7).lowercased() == "bearer " else { return nil }
        return String(value.dropFirst(7)).trimmingSpaces
    }

    /// HTTP methods Roost routes.
    public enum Method: String, Sendable {
        case get = "GET", head = "HEAD", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE", options = "OPTIONS", other = "OTHER"
    }
}

/// Header fields in arrival order, looked up case-insensitively.
public struct Headers: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

extension String {
    /// ASCII case-insensitive equality, as header names need.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in (x | 0x20) == (y | 0x20) }
    }
}
