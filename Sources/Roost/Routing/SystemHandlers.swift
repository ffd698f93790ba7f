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
    /// `/openapi.yaml` with the collections' schemas as models.
    let openAPI = OpenAPIWithSchemas(base: HTMLPages.openAPIBytes)

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
            RoostRoute("/openapi.yaml", [.get: { [jobs, openAPI, info] r, out in
                // Models of every collection for the admin (or with server_info_public); of public ones for anyone else.
                let snapshot = jobs.access.settings.snapshot
                let everything = info.isPublic || jobs.access.authenticator.isAdmin(r)
                let schemas = everything ? snapshot.schemas : snapshot.schemas.filter { snapshot.permission(of: $0.key) == .public }
                out.send(Response(status: 200, headers: Headers([("Content-Type", "application/yaml; charset=utf-8")]),
                                  body: openAPI.bytes(schemas, generation: snapshot.generation, everything: everything)))
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

    /// The front page: only what the caller may read is listed (public
    /// collections to anyone; shared, readonly and private ones to signed-in
    /// users, a private one without its count; everything to the admin); the version and listen
    /// addresses only for the admin unless `server_info: public`.
    func home(_ request: Request, _ out: ResponseWriter) {
        let (info, access) = (self.info, jobs.access)
        // A bad token is no token here: the page lists more only for the admin.
        jobs.read(request, out, badToken: .ignore) { reader, caller in
            let details = caller.principal == .admin || info.isPublic
            let visible = try reader.collectionSummaries().compactMap { c -> HTMLPages.VisibleCollection? in
                let level = access.level(of: c.name)
                return Self.visibility(level, to: caller.principal).map { HTMLPages.VisibleCollection(name: c.name, level: level, count: $0 ? c.count : nil) }
            }
            return .html(200, HTMLPages.home(version: details ? info.version : nil, listen: details ? info.listen : [],
                                             startedAt: info.startedAt, collections: visible, signedIn: caller.principal != .anonymous))
        }
    }

    /// Whether `principal` sees a collection of `level` on the front page, and
    /// if so whether its count (every row's) is theirs to see: nil hides it.
    static func visibility(_ level: AccessScope.Level, to principal: AccessScope.Principal) -> Bool? {
        switch (principal, level) {
        case (.admin, _), (_, .public): return true
        case (.anonymous, _): return nil
        case (_, .private): return false                  // their own rows only: no total
        default: return true                              // shared, readonly: every signed-in user reads every row
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
