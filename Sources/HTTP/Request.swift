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

    /// HTTP methods Roost routes.
    /// The token of an `Authorization: Bearer <token>` header, if any.
    public var bearerToken: String? {
        guard let value = headers["Authorization"], value.count > 7,
              value.prefix(7).lowercased() == "bearer " else { return nil }
        return String(value.dropFirst(7)).trimmingSpaces
    }

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
