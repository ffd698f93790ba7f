/// Every route, indexed for matching on the event loop: routes whose first
/// segment is a literal are looked up by it (one hash), then tried in
/// declaration order; routes that begin with a parameter (`/:collection…`)
/// are the fallback, tried when no literal route fits. A path is owned by the
/// first route it fits: a method that route lacks is a 405, never a search on.
/// Matching allocates nothing.
public struct RouteTable<Handler: Sendable>: Sendable {
    /// What a path matched.
    public struct Match: Sendable {
        /// The owning route, or nil when nothing fits (a 404).
        public let route: Route<Handler>?
        /// True when no literal route fitted, so the first segment is a parameter.
        public let isFallback: Bool

        /// The bounded metrics label: the route's template.
        @inlinable public var label: String { route?.template ?? "/*" }

        @usableFromInline init(route: Route<Handler>?, isFallback: Bool) {
            self.route = route
            self.isFallback = isFallback
        }
    }

    @usableFromInline let root: [Route<Handler>]
    @usableFromInline let byFirst: [String: [Route<Handler>]]
    @usableFromInline let fallback: [Route<Handler>]
    /// Every route, in declaration order.
    public let routes: [Route<Handler>]

    public init(_ routes: [Route<Handler>]) {
        self.routes = routes
        root = routes.filter { $0.pattern.isEmpty }
        fallback = routes.filter { !$0.pattern.isEmpty && $0.firstLiteral == nil }
        byFirst = Dictionary(grouping: routes.filter { $0.firstLiteral != nil }, by: { $0.firstLiteral! })
    }

    /// The route that owns `segments` (decoded, non-empty path segments).
    @inlinable public func match(_ segments: [String]) -> Match {
        guard let first = segments.first else { return Match(route: root.first, isFallback: false) }
        if let group = byFirst[first] {
            for route in group where route.matches(segments) { return Match(route: route, isFallback: false) }
        }
        for route in fallback where route.matches(segments) { return Match(route: route, isFallback: true) }
        return Match(route: nil, isFallback: true)
    }
}
