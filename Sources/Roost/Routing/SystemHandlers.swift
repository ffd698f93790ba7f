import EventLoop
import HTTP
import Store

/// The daemon's own pages: the status page `/`, `/healthz`, `/readyz`,
/// `/openapi.yaml` and `/metrics`.
struct SystemHandlers: Sendable {
    let jobs: CallerJobs
    let info: ServerInfo
    let metrics: MetricsEndpoint
    let state: ServerState

    var routes: [RoostRoute] {
        let (health, ready): (RouteHandler, RouteHandler) = ({ _, out in out.send(.json(200, "{\"status\":\"ok\"}")) },
                                                            { _, out in out.send(readiness()) })
        let metrics = self.metrics
        return [
            RoostRoute("/", [.get: { r, out in home(r, out) }]),
            // Any path below the probes answers too, as it always has.
            RoostRoute("/healthz", [.get: health]),
            RoostRoute("/healthz/*", [.get: health]),
            RoostRoute("/readyz", [.get: ready]),
            RoostRoute("/readyz/*", [.get: ready]),
            RoostRoute("/openapi.yaml", [.get: { _, out in
                out.send(Response(status: 200, headers: Headers([("Content-Type", "application/yaml; charset=utf-8")]),
                                  body: HTMLPages.openAPIBytes))
            }]),
            RoostRoute("/metrics", [.get: { [info, jobs] r, out in
                out.send(Self.mayReadMetrics(r, info.metricsAccess, jobs.access.authenticator) ? metrics.respond()
                         : HTTPError(.forbidden, "/metrics is for local scrapers and the admin token here (metrics_access).").response)
            }]),
        ]
    }

    /// `metrics_access`: local (loopback client after `trusted_proxies`, or the admin token), admin, public.
    static func mayReadMetrics(_ request: Request, _ access: RoostConfig.MetricsAccess, _ authenticator: Authenticator) -> Bool {
        switch access {
        case .public: return true
        case .admin: return authenticator.isAdmin(request)
        case .local: return IPAddress(request.remoteAddress)?.isLoopback == true || authenticator.isAdmin(request)
        }
    }

    /// The status page: only what the caller may read is listed (public
    /// collections, or everything for the admin); the version and listen
    /// addresses only for the admin unless `server_info: public`.
    func home(_ request: Request, _ out: ResponseWriter) {
        let (info, access) = (self.info, jobs.access)
        // A bad token is no token here: the page lists more only for the admin.
        jobs.read(request, out, badToken: .ignore) { reader, caller in
            let isAdmin = caller.principal == .admin
            let visible = try reader.collectionSummaries().filter { isAdmin || access.level(of: $0.name) == .public }
            let details = isAdmin || info.isPublic
            return .html(200, HTMLPages.home(version: details ? info.version : nil, listen: details ? info.listen : [],
                                             startedAt: info.startedAt, collections: visible))
        }
    }

    /// Not ready while draining for shutdown (the database is about to
    /// close) or when a queue is nearly full.
    func readiness() -> Response {
        if state.isDraining { return HTTPError(.shuttingDown, "The server is shutting down.").response }
        let pools = jobs.pools
        let saturated = pools.readers.depth >= pools.readers.queue.capacity * 9 / 10
            || pools.writer.depth >= pools.writer.queue.capacity * 9 / 10
            || pools.hashers.depth >= pools.hashers.queue.capacity * 9 / 10
        return saturated ? HTTPError.overloaded().response : .json(200, "{\"status\":\"ready\"}")
    }
}
