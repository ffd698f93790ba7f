/// One endpoint: a path template such as `/:collection/:id` and the handler
/// for each method it answers. Declared once; the `Allow` header, the 405,
/// HEAD and the metrics label (the template) all come from it.
///
/// Template segments: a literal (`users`), a named parameter (`:id`, any one
/// segment, read by handlers as `request.parameter("id")`) or a final `*` (any number
/// of further segments, none included).
public struct Route<Handler: Sendable>: Sendable {
    /// One piece of a template.
    public enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest
    }

    /// The template as declared; it is the metrics label.
    public let template: String
    @usableFromInline let pattern: [Segment]
    @usableFromInline let handlers: [(method: Request.Method, handler: Handler)]
    /// Answers every method itself (the console's static site).
    @usableFromInline let anyMethod: Handler?
    /// HEAD runs the GET handler (the body is dropped when sent); false for streams.
    @usableFromInline let headAsGet: Bool
    /// The methods answered, in a fixed order: the `Allow` header of a 405.
    public let allow: String
    /// Each named parameter's segment position (`:id` in `/users/:id` is 1).
    public let parameters: [String: Int]
    /// The methods with a handler, in the `Allow` order, without the implied HEAD
    /// (what `openapi.yaml` must describe); every method for `anyMethod` routes.
    public var methods: [Request.Method] {
        anyMethod != nil ? [] : Self.order.filter { m in handlers.contains { $0.method == m } }
    }
    /// True for a route that answers every method itself (the console's files, area fallbacks).
    public var answersAnyMethod: Bool { anyMethod != nil }

    /// A route answering the listed methods.
    /// - Parameters:
    ///   - headAsGet: HEAD is answered by the GET handler (false for endless streams).
    public init(_ template: String, _ handlers: KeyValuePairs<Request.Method, Handler>, headAsGet: Bool = true) {
        self.template = template
        pattern = Self.parse(template)
        parameters = Self.positions(pattern)
        self.handlers = handlers.map { (method: $0.key, handler: $0.value) }
        anyMethod = nil
        self.headAsGet = headAsGet
        let methods = Set(handlers.map(\.key))
        allow = Self.order.filter { m in
            methods.contains(m) || (m == .head && headAsGet && methods.contains(.get))
        }.map(\.rawValue).joined(separator: ", ")
    }

    /// A route whose one handler answers every method.
    public init(_ template: String, anyMethod handler: Handler) {
        self.template = template
        pattern = Self.parse(template)
        parameters = Self.positions(pattern)
        handlers = []
        anyMethod = handler
        headAsGet = true
        allow = Self.order.map(\.rawValue).joined(separator: ", ")
    }

    private static var order: [Request.Method] { [.get, .head, .post, .put, .patch, .delete] }

    static func parse(_ template: String) -> [Segment] {
        template.split(separator: "/").map { part in
            if part == "*" { return .rest }
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            return .literal(String(part))
        }
    }

    static func positions(_ pattern: [Segment]) -> [String: Int] {
        var positions: [String: Int] = [:]
        for (i, piece) in pattern.enumerated() {
            guard case .parameter(let name) = piece else { continue }
            precondition(positions.updateValue(i, forKey: name) == nil, "a route template names :\(name) twice")
        }
        return positions
    }

    /// The first segment when it is a literal: the table's index key.
    var firstLiteral: String? {
        if case .literal(let name)? = pattern.first { return name }
        return nil
    }

    /// True when `segments` fit the template.
    @inlinable func matches(_ segments: [String]) -> Bool {
        var i = 0
        for piece in pattern {
            switch piece {
            case .rest: return true
            case .parameter: guard i < segments.count else { return false }
            case .literal(let name): guard i < segments.count, segments[i] == name else { return false }
            }
            i += 1
        }
        return i == segments.count
    }

    /// The handler for `method`, or nil for a 405 (HEAD falls back to GET).
    @inlinable public func handler(for method: Request.Method) -> Handler? {
        if let anyMethod { return anyMethod }
        for entry in handlers where entry.method == method { return entry.handler }
        guard method == .head, headAsGet else { return nil }
        for entry in handlers where entry.method == .get { return entry.handler }
        return nil
    }
}
