import Console
import EventLoop
import HTTP
import Store

/// Maps a request to its handler. Runs on the event loop: it only looks at
/// the method and path and never touches the database itself.
struct Router: Sendable {
    let collections: CollectionHandlers
    let batch: BatchHandler
    let live: LiveHandlers
    let accounts: AccountHandlers
    let files: FileHandlers
    let push: PushHandlers
    let admin: WebhookHandlers
    let backups: BackupHandlers
    let pools: StorePools
    let info: ServerInfo
    let metrics: MetricsEndpoint
    let state: ServerState
    let console: ConsoleAdminHandlers

    func handle(_ request: Request, _ out: ResponseWriter) {
        let s = request.segments
        switch s.count {
        case 0:
            guard request.method == .get || request.method == .head else {
                return out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
            }
            let (info, access) = (self.info, collections.access)
            pools.read(request, out) { reader in
                // Only what the caller may read is listed: public collections,
                // or everything for the admin.
                let isAdmin = (try? access.caller(request, reader).principal) == .admin
                let visible = try reader.collectionSummaries().filter { isAdmin || access.level(of: $0.name) == .public }
                return .html(200, HTMLPages.home(version: info.version, listen: info.listen, startedAt: info.startedAt,
                                                 collections: visible))
            }
        case _ where (s[0] == "healthz" || s[0] == "readyz") && request.method != .get && request.method != .head:
            out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
        case _ where s[0] == "healthz":
            out.send(.json(200, "{\"status\":\"ok\"}"))
        case _ where s[0] == "readyz":
            // Not ready while draining for shutdown (the database is about to
            // close) or when a queue is nearly full.
            let saturated = pools.readers.depth >= pools.readers.queue.capacity * 9 / 10
                || pools.writer.depth >= pools.writer.queue.capacity * 9 / 10
                || pools.hashers.depth >= pools.hashers.queue.capacity * 9 / 10
            if state.isDraining {
                out.send(HTTPError(503, "ShuttingDown", "The server is shutting down.").response)
            } else {
                out.send(saturated ? HTTPError.overloaded().response : .json(200, "{\"status\":\"ready\"}"))
            }
        case _ where s[0] == "openapi.yaml" && s.count == 1:
            guard request.method == .get || request.method == .head else {
                return out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
            }
            out.send(Response(status: 200, headers: Headers([("Content-Type", "application/yaml; charset=utf-8")]),
                              body: HTMLPages.openAPIBytes))
        case _ where s[0] == "metrics" && s.count == 1:
            guard request.method == .get || request.method == .head else {
                return out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
            }
            out.send(metrics.respond())
        case _ where s[0] == "events" && s.count == 1:
            request.method == .get ? live.events(request, out) : out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
        case _ where s[0] == "files" && s.count == 2 && s[1] == "_live" && request.method == .get:
            live.collection("files", request, out)
        case _ where s[0] == "_batch" && s.count == 1:
            request.method == .post ? batch.handle(request, out) : out.send(HTTPError.methodNotAllowed(request.method, allow: "POST").response)
        case _ where s[0] == "files" && s.count == 2 && s[1] == "_deltaset" && request.method == .get:
            collections.deltaset("files", request, out, level: files.level)
        case _ where s[0] == "files":
            files.route(request, out)
        case _ where s[0] == "users":
            routeUsers(request, out)
        case _ where s[0] == "push":
            push.route(request, out)
        case _ where s[0] == "admin" && s.count == 2 && s[1] == "backups":
            backups.route(request, out)
        case _ where s[0] == "_":
            out.send(ConsoleSite.response(for: request))
        case _ where ConsoleAdminHandlers.handles(s):
            console.route(request, out)
        case _ where s[0] == "admin":
            admin.route(request, out)
        case _ where s[0] == "login" && s.count == 1:
            request.method == .post ? accounts.logIn(request, out) : out.send(HTTPError.methodNotAllowed(request.method, allow: "POST").response)
        case _ where s[0] == "logout" && s.count == 1:
            request.method == .post ? accounts.logOut(request, out) : out.send(HTTPError.methodNotAllowed(request.method, allow: "POST").response)
        default:
            routeCollection(request, out)
        }
    }

    /// The member directory and account endpoints.
    private func routeUsers(_ request: Request, _ out: ResponseWriter) {
        let s = request.segments
        let users = AccessPolicy.usersCollection
        let method = request.method == .head ? .get : request.method
        switch (s.count, method) {
        case (1, .get): collections.list(users, request, out)
        case (1, .post): accounts.signUp(request, out)
        case (1, _): out.send(HTTPError.methodNotAllowed(request.method, allow: "GET, POST").response)
        case (2, .get) where s[1] == "_count": collections.count(users, request, out)
        case (2, .get) where s[1] == "_deltaset": collections.deltaset(users, request, out)
        case (2, .get) where s[1] == "_live": live.collection(users, request, out)
        case (2, .get) where s[1] == "me": accounts.me(request, out)
        case (2, .get): collections.get(users, s[1], request, out)
        case (2, .put): accounts.update(s[1], request, out, merge: false)
        case (2, .patch): accounts.update(s[1], request, out, merge: true)
        case (2, .delete): accounts.delete(s[1], request, out)
        case (2, _): out.send(HTTPError.methodNotAllowed(request.method, allow: "GET, PUT, PATCH, DELETE").response)
        default: out.send(HTTPError.notFound("No endpoint at \(request.path).").response)
        }
    }

    private func routeCollection(_ request: Request, _ out: ResponseWriter) {
        let s = request.segments
        let name = s[0]
        guard !CollectionName.isReserved(name) else {
            return out.send(HTTPError(400, "ReservedCollectionName",
                                      "\"\(name)\" is reserved for Roost's own endpoints and cannot be used as a collection.").response)
        }
        guard CollectionName.isWellFormed(name) else {
            // Nothing can live at such a path (`/favicon.ico`): a read is 404; a write says why.
            if request.method == .get || request.method == .head {
                return out.send(HTTPError.notFound("Nothing here: \"/\(name)\" is not a collection name (they start with a letter and hold only letters, digits, '_' and '-').").response)
            }
            return out.send(HTTPError(400, "InvalidCollectionName",
                                      "Collection names start with a letter and hold only letters, digits, '_' and '-' (at most 64).").response)
        }
        let method = request.method == .head ? .get : request.method
        switch (s.count, method) {
        case (1, .get): collections.list(name, request, out)
        case (1, .post): collections.create(name, request, out)
        case (1, _): out.send(HTTPError.methodNotAllowed(request.method, allow: "GET, POST").response)
        case (2, .get) where s[1] == "_count": collections.count(name, request, out)
        case (2, _) where s[1] == "_count": out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
        case (2, .get) where s[1] == "_deltaset": collections.deltaset(name, request, out)
        case (2, .get) where s[1] == "_live": live.collection(name, request, out)
        case (2, _) where s[1] == "_live": out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
        case (2, _) where s[1] == "_deltaset": out.send(HTTPError.methodNotAllowed(request.method, allow: "GET").response)
        case (2, .get): collections.get(name, s[1], request, out)
        case (2, .put): collections.replace(name, s[1], request, out)
        case (2, .patch): collections.patch(name, s[1], request, out)
        case (2, .delete): collections.delete(name, s[1], request, out)
        case (2, _): out.send(HTTPError.methodNotAllowed(request.method, allow: "GET, PUT, PATCH, DELETE").response)
        default: out.send(HTTPError.notFound("No endpoint at \(request.path).").response)
        }
    }
}

/// Facts about the running daemon for the front page.
struct ServerInfo: Sendable {
    let version: String
    let listen: [String]
    let startedAt: String
}
