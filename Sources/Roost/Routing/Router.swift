import EventLoop
import HTTP
import Store

/// What a route runs: on the event loop, with the request and its one reply.
typealias RouteHandler = @Sendable (Request, ResponseWriter) -> Void
/// A route of Roost's table.
typealias RoostRoute = Route<RouteHandler>

/// Maps a request to its handler through one `RouteTable` (every route is
/// declared once, in `Router+Routes.swift` and the areas' `routes`). Runs on
/// the event loop: it only looks at the method and path and never touches
/// the database itself.
struct Router: Sendable {
    let table: RouteTable<RouteHandler>
    /// The callers' budgets, spent here before a handler queues any work (nil: none).
    var limits: RequestLimits? = nil

    /// A 404 for any method: the end of an area's routes.
    static let noEndpoint: RouteHandler = { request, out in
        out.send(HTTPError.notFound("No endpoint at \(request.path).").response)
    }

    func handle(_ request: Request, _ out: ResponseWriter) {
        let match = table.match(request.segments)
        out.routed(match.label)
        if match.isFallback, let refusal = Self.refuseCollection(request) { return out.send(refusal) }
        guard let route = match.route else { return Self.noEndpoint(request, out) }
        let request = request.matched(route)
        guard let handler = route.handler(for: request.method) else {
            return out.send(HTTPError.methodNotAllowed(request.method, allow: route.allow).response)
        }
        if let refusal = limits?.refusal(request, route: route.template) { return out.send(refusal) }
        handler(request, out)
    }

    /// The first segment of a path no literal route owns is a collection
    /// name: a reserved one is a 400; one that cannot be a name (`/favicon.ico`)
    /// is a 404 to a read, and a 400 that says why to a write.
    static func refuseCollection(_ request: Request) -> Response? {
        let name = request.segments[0]
        guard !CollectionName.isReserved(name) else {
            return HTTPError(.reservedCollectionName,
                             "\"\(name)\" is reserved for Roost's own endpoints and cannot be used as a collection.").response
        }
        guard CollectionName.isWellFormed(name) else {
            if request.method == .get || request.method == .head {
                return HTTPError.notFound("Nothing here: \"/\(name)\" is not a collection name (they start with a letter and hold only letters, digits, '_' and '-').").response
            }
            return HTTPError(.invalidCollectionName,
                             "Collection names start with a letter and hold only letters, digits, '_' and '-' (at most 64).").response
        }
        return nil
    }
}

/// Facts about the running daemon for the front page.
struct ServerInfo: Sendable {
    let version: String
    let listen: [String]
    let startedAt: String
    /// Anonymous visitors of `/` see `version` and `listen` too (`server_info: public`).
    var isPublic = false
    /// Who may read `/metrics`.
    var metricsAccess: RoostConfig.MetricsAccess = .local
}
