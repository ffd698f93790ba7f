import Console
import EventLoop
import HTTP
import Store

/// The handlers the route table is assembled from.
struct RouteAreas: Sendable {
    let collections: CollectionHandlers
    let batch: BatchHandler
    let live: LiveHandlers
    let accounts: AccountHandlers
    let files: FileHandlers
    let push: PushHandlers
    let admin: WebhookHandlers
    let roles: RoleHandlers
    let backups: BackupHandlers
    let console: ConsoleAdminHandlers
    let collectionsAdmin: CollectionAdminHandlers
    let setup: AdminSetupHandlers
    let system: SystemHandlers
    let scripts: RoostScripts
}

extension Router {
    /// Every route of the daemon, each declared once. Order matters only
    /// within a first segment: the first template a path fits owns it.
    init(_ areas: RouteAreas) {
        let (system, live, collections, accounts) = (areas.system, areas.live, areas.collections, areas.accounts)
        let users = AccessPolicy.usersCollection
        let files = FileHandlers.collection
        let update: RouteHandler = { r, out in accounts.update(r.parameter("id"), r, out, merge: false) }
        let merge: RouteHandler = { r, out in accounts.update(r.parameter("id"), r, out, merge: true) }
        let delete: RouteHandler = { r, out in accounts.delete(r.parameter("id"), r, out) }
        var routes: [RoostRoute] = system.routes + [
            RoostRoute("/events", [.get: { r, out in live.events(r, out) }], headAsGet: false),
            RoostRoute("/_batch", [.post: { r, out in areas.batch.handle(r, out) }]),
            RoostRoute("/login", [.post: { r, out in accounts.logIn(r, out) }]),
            RoostRoute("/logout", [.post: { r, out in accounts.logOut(r, out) }]),
        ]
        routes += accounts.authRoutes
        routes += [
            RoostRoute("/_/*", anyMethod: { r, out in out.send(ConsoleSite.response(for: r)) }),
            // The files collection's feeds, before the file API's `/files/:id`.
            RoostRoute("/files/_deltaset", [.get: { r, out in collections.deltaset(files, r, out, level: areas.files.level) }]),
            RoostRoute("/files/_live", [.get: { r, out in live.collection(files, r, out) }], headAsGet: false),
        ]
        routes += areas.files.routes
        routes += [
            RoostRoute("/users", [.get: { r, out in collections.list(users, r, out) }, .post: { r, out in accounts.signUp(r, out) }]),
            RoostRoute("/users/_count", [.get: { r, out in collections.count(users, r, out) }]),
            RoostRoute("/users/_deltaset", [.get: { r, out in collections.deltaset(users, r, out) }]),
            RoostRoute("/users/_live", [.get: { r, out in live.collection(users, r, out) }], headAsGet: false),
            // `/users/me` is only read (openapi.yaml declares GET alone): writes are 405, not writes to an id "me".
            RoostRoute("/users/me", [.get: { r, out in accounts.me(r, out) }]),
            RoostRoute("/users/:id", [.get: { r, out in collections.get(users, r.parameter("id"), r, out) },
                                      .put: update, .patch: merge, .delete: delete]),
            RoostRoute("/users/:id/2fa", [.delete: { r, out in accounts.twoFactorReset(r.segments[1], r, out) }]),
            RoostRoute("/users/*", anyMethod: Router.noEndpoint),
        ]
        routes += areas.push.routes
        routes += areas.setup.routes + areas.backups.routes + areas.console.routes + areas.collectionsAdmin.routes + areas.admin.routes + areas.roles.routes
        routes += AdminUserHandlers(accounts: accounts).routes
        // The scripts' functions (`roost.route`): "fn" is not a collection name.
        let tail = [RoostRoute("/admin/*", anyMethod: Router.noEndpoint)] + areas.scripts.routes(maxBodyBytes: collections.maxBodyBytes)
            + Self.collectionRoutes(collections, live)
        let listing = RouteListing.json(routes + tail)
        routes.append(RoostRoute(RouteListing.template, [.get: { r, out in areas.console.asAdmin(r, out) { _ in .json(200, listing) } }]))
        routes += tail
        self.init(table: RouteTable(routes), limits: collections.access.settings.limits)
    }

    /// `/:collection…`: what no literal route owns (the name is checked first, in `handle`).
    static func collectionRoutes(_ collections: CollectionHandlers, _ live: LiveHandlers) -> [RoostRoute] {
        [
            RoostRoute("/:collection", [.get: { r, out in collections.list(r.parameter("collection"), r, out) },
                                        .post: { r, out in collections.create(r.parameter("collection"), r, out) }]),
            RoostRoute("/:collection/_count", [.get: { r, out in collections.count(r.parameter("collection"), r, out) }]),
            RoostRoute("/:collection/_deltaset", [.get: { r, out in collections.deltaset(r.parameter("collection"), r, out) }]),
            RoostRoute("/:collection/_live", [.get: { r, out in live.collection(r.parameter("collection"), r, out) }], headAsGet: false),
            RoostRoute("/:collection/:id", [
                .get: { r, out in collections.get(r.parameter("collection"), r.parameter("id"), r, out) },
                .put: { r, out in collections.replace(r.parameter("collection"), r.parameter("id"), r, out) },
                .patch: { r, out in collections.patch(r.parameter("collection"), r.parameter("id"), r, out) },
                .delete: { r, out in collections.delete(r.parameter("collection"), r.parameter("id"), r, out) },
            ]),
            RoostRoute("/:collection/*", anyMethod: Router.noEndpoint),
        ]
    }
}
