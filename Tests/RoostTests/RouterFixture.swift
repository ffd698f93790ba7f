import Auth
import Backup
import Foundation
import HTTP
import Jobs
import Logging
import Store
@testable import EventLoop
@testable import Roost

/// The daemon's real router and handlers on a temporary data directory, with
/// no event loop and no socket: a request goes in, the response comes back
/// through a capturing `ResponseWriter`.
final class RouterFixture: Sendable {
    static let adminToken = "router-fixture-admin-token"
    /// One per test process: the worker threads live until it exits.
    nonisolated(unsafe) static let shared = try! RouterFixture()

    let router: Router
    let dataDir: String

    init() throws {
        dataDir = NSTemporaryDirectory() + "roost-router-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        var config = RoostConfig()
        config.dataDir = dataDir
        config.readers = 1
        config.defaultPermission = .public
        config.adminToken = Self.adminToken
        var logger = Logger(label: "router-fixture")
        logger.logLevel = .critical
        let databasePath = dataDir + "/roost.db"
        let writer = try DocumentWriter(path: databasePath, synchronous: "NORMAL", ids: DocumentID(), logger: logger)
        try writer.migrate()
        let settings = ReloadableSettings(config)
        let pools = StorePools(databasePath: databasePath, writer: writer, config: config, logger: logger)
        try pools.start()
        let access = AccessPolicy(
            authenticator: Authenticator(adminTokenHash: SessionToken.hash(Self.adminToken), sessionLifetime: 3600, logger: logger),
            settings: settings, renew: { _ in })
        let outboxDirty = LockedBox(false)
        let hooks = HookServices(registry: BuiltInHooks.registry(config: config, settings: settings, outboxDirty: outboxDirty,
                                                                 logger: logger),
                                 outboxDirty: outboxDirty, logger: logger)
        let collections = CollectionHandlers(pools: pools, maxBodyBytes: config.maxBodyBytes, access: access, hooks: hooks)
        let removals = DeferredRemovals(hold: try BackupHold(dataDir: dataDir))
        let objects = try FileHandlers.objectStore(config: config, removals: removals, logger: logger)
        let files = try FileHandlers.start(config: config, objects: objects, pools: pools, access: access, logger: logger)
        let hub = LiveHub(databasePath: databasePath, access: access, filesLevel: files.level, config: config, logger: logger)
        let stats = ConsoleStats(pools: pools, files: files, databasePath: databasePath, liveStreams: { 0 }, logger: logger)
        router = Router(RouteAreas(
            collections: collections, batch: BatchHandler(collections: collections, logger: logger),
            live: LiveHandlers(pools: pools, access: access, hub: hub),
            accounts: AccountHandlers(pools: pools, collections: collections, access: access,
                                      hasher: PasswordHasher(cost: config.passwordCost), sessionLifetime: 3600),
            files: files, push: PushHandlers(pools: pools, collections: collections, access: access),
            admin: WebhookHandlers(pools: pools, collections: collections, access: access, hooks: hooks),
            backups: BackupHandlers(service: BackupService(settings: config.backups, dataDir: dataDir, removals: removals,
                                                           logger: logger),
                                    pools: pools, access: access),
            console: ConsoleAdminHandlers(pools: pools, access: access, stats: stats, logs: .shared),
            system: SystemHandlers(pools: pools, access: access, info: ServerInfo(version: "test", listen: [], startedAt: ""),
                                   metrics: MetricsEndpoint(pools: pools), state: ServerState())))
    }

    /// Routes one request and waits for its response (from whichever thread sends it).
    func send(_ method: Request.Method, _ target: String, headers: [(String, String)] = [], body: String = "") -> Response {
        let parts = target.split(separator: "?", maxSplits: 1).map(String.init)
        let path = parts[0]
        let query = parts.count > 1 ? parts[1].withCString { HTTPServer.parseQuery($0) } : [:]
        let request = Request(method: method, path: path, segments: HTTPServer.segments(path), query: query,
                              headers: Headers(headers.map { (name: $0.0, value: $0.1) }), body: Array(body.utf8),
                              requestID: "fixture")
        let done = DispatchSemaphore(value: 0)
        let box = LockedBox<Response?>(nil)
        router.handle(request, ResponseWriter(capturing: { response in box.set(response); done.signal() }))
        done.wait()
        return box.get()!
    }
}

extension Response {
    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }
}
