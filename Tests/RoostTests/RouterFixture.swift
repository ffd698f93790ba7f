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
    /// The job seam the handlers run on (for tests that count what reached it).
    let jobs: CallerJobs
    let dataDir: String

    init() throws {
        dataDir = NSTemporaryDirectory() + "roost-router-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        var config = RoostConfig()
        config.dataDir = dataDir
        config.readers = 1
        config.defaultPermission = .public
        config.adminToken = Self.adminToken
        config.passwordCost = .owasp  // the cheapest hash: sign-ups and log-ins stay quick
        // Every request here comes from one address, and CallerSeamTests opens more live streams than
        // rate_limits.live_streams' burst; the limits are tested against a daemon (test_rate_limits.py).
        config.rateLimits.liveStreams = RateLimit(perSecond: 0, burst: 0)
        var logger = Logger(label: "router-fixture")
        logger.logLevel = .critical
        let engine = try config.storeEngine()
        let writer = try engine.openWriter(ids: DocumentID(), logger: logger)
        try writer.migrate()
        let pools = StorePools(engine: engine, writer: writer, config: config, logger: logger)
        try pools.start()
        // The server's own composition: every area it routes is routed here.
        let removals = DeferredRemovals(hold: try BackupHold(dataDir: dataDir))
        let areas = try ServerComposition(config: config, settings: ReloadableSettings(config), pools: pools, removals: removals,
                                          objects: try FileHandlers.objectStore(config: config, removals: removals, logger: logger),
                                          info: ServerInfo(version: "test", listen: [], startedAt: ""), state: ServerState(),
                                          logger: logger)
        try areas.files.start()
        router = areas.router
        jobs = areas.jobs
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
