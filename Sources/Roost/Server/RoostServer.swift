import Auth
import Backup
import Daemon
import EventLoop
import Foundation
import HTTP
import Hooks
import Jobs
import Logging
import Store
import StoreSQLite
import StorePostgres
import Timing
import Webhooks

/// The composition root: opens the store, starts the worker pools and the
/// event loops, and runs until SIGTERM or SIGINT.
///
/// Threads: loop 0 runs on the caller's thread, loops 1… on their own;
/// `readers` reader threads; one writer thread.
public final class RoostServer {
    public static let version = "0.2.0"

    let config: RoostConfig
    let logger: Logger
    let services: DaemonServices

    public init(config: RoostConfig, logger: Logger, services: DaemonServices = DaemonServices()) {
        self.config = config
        self.logger = logger
        self.services = services
    }

    /// Starts everything, calls `onReady` with the bound addresses, and blocks until shutdown.
    public func run(onReady: ([String]) -> Void = { _ in }) throws {
        EventLoop.prepareProcess()
        // The port first (or the inherited sockets): a busy port or a bad TLS
        // pair fails before the data directory is created or migrated.
        let tls = try Self.tlsContext(config, logger: logger)
        try Self.checkProxyProtocol(config)
        let cors = try config.corsPolicy()
        let listeners = try bindListeners(tls: tls != nil)
        let addresses = listeners.compactMap { l in
            l.sockets.first.map { (l.tls ? "https://" : "") + $0.description + (l.proxyProtocol ? RoostConfig.Listener.proxySuffix : "") }
        }
        try FileManager.default.createDirectory(atPath: config.dataDir, withIntermediateDirectories: true)
        let lock = try DataDirectoryLock(directory: config.dataDir)
        try BackupRestorer.checkNotInterrupted(dataDir: config.dataDir)
        // Tested (never waited for) before anything that would take away what a running backup copies.
        let backupHold = try BackupHold(dataDir: config.dataDir)
        let removals = DeferredRemovals(hold: backupHold)
        let engine = try config.storeEngine()

        let writer = try engine.openWriter(ids: DocumentID(), logger: logger)
        try writer.migrate()
        for (name, collection) in config.collections.sorted(by: { $0.key < $1.key }) where BuiltInRules(rawValue: name) == nil {
            try writer.applyIndexes(Set(collection.indexes), on: name)
        }
        let settings = ReloadableSettings(config)
        // Collections set up at run time (docs/COLLECTIONS.md), before references are read from them.
        try CollectionSettingsSync.load(try engine.openReader(role: "startup"), into: settings, logger: logger)
        try applyReferences(writer, settings: settings)
        writer.useRuleStamps { collection in settings.rules(of: collection)?.read?.stamp }
        writer.useSchemas { collection in settings.schema(of: collection)?.compiled }
        writer.useDeclaredGeoPaths { collection in settings.geoPaths(of: collection) }
        let objects = try FileHandlers.objectStore(config: config, removals: removals, logger: logger)
        if !engine.isEmbedded && config.filesStore == .local {
            logger.notice("files are kept on this node's disk (files_store: local) while the data are in a shared database: run one node, or use files_store: s3 for many (docs/SCALING.md)")
        }
        if try backupHold.ifNoBackup({ try FileHandlers.sweep(objects: objects, writer: writer, sharedRows: !engine.isEmbedded, logger: logger) }) == nil {
            logger.notice("a backup is running: the file store sweep waits for the next start")
        }
        try writer.syncConfigWebhookEndpoints(config.webhooks.endpoints)
        try writer.prepareScheduledRuns()

        let pools = StorePools(engine: engine, writer: writer, config: config, logger: logger)
        let outbox = OutboxDispatchers(webhooks: makeWebhookDispatcher(engine: engine, pools: pools),
                                       pushes: try makePushDispatcher(engine: engine, pools: pools))
        let loops = (0..<config.loops).map { EventLoop(index: $0) }
        let state = ServerState()
        let areas = try ServerComposition(
            config: config, settings: settings, pools: pools, removals: removals, objects: objects,
            info: ServerInfo(version: Self.version, listen: addresses, startedAt: Timestamp.now(), isPublic: config.serverInfoPublic,
                             metricsAccess: config.metricsAccess), state: state, wakeOutbox: outbox.wake, logger: logger)
        let (hub, router, scripts) = (areas.hub, areas.router, areas.scripts)
        let trustedProxies = try config.proxies()
        let lifecycle = ServiceList(lifecycleServices(engine: engine, writer: writer, pools: pools, backupHold: backupHold, areas: areas, outbox: outbox),
                                    logger: logger)
        try lifecycle.start()
        // evhttp's own cap is a backstop above ours (JSON bodies and uploads), so ours answers with JSON.
        let evhttpCap = max(config.maxBodyBytes * 2 + 65536, FileHandlers.bodyCap(config) + 65536)
        let server = HTTPServer(loops: loops, sockets: BoundListener.groups(listeners, tls: false, proxyProtocol: false),
                                tlsSockets: BoundListener.groups(listeners, tls: true, proxyProtocol: false), tls: tls,
                                proxySockets: BoundListener.groups(listeners, tls: false, proxyProtocol: true),
                                maxBodyBytes: evhttpCap, logger: logger,
                                trustedProxies: trustedProxies, headerSeconds: config.headerTimeout,
                                maxConnectionsPerAddress: config.maxConnectionsPerAddress, cors: cors, observer: Self.observer(services.accessLog)) { request, out in
            router.handle(request, out)
        }
        for listener in listeners { for s in listener.sockets { close(s.fd) } }

        let shutdown = GracefulShutdown(loops: loops, server: server, logger: logger)
        loops[0].onSignal(SIGTERM) { shutdown.begin(reason: "SIGTERM") }
        loops[0].onSignal(SIGINT) { shutdown.begin(reason: "SIGINT") }
        let notifier = services.notifier
        shutdown.settled = { hub.drained }
        shutdown.onBegin = { reason in
            hub.shutdown() // streams end cleanly; clients resume with Last-Event-ID after the restart
            state.beginDraining()
            notifier.stopping(status: "Stopping (\(reason)): finishing in-flight requests")
        }
        if let load = services.reloadConfig {
            let reloader = ConfigReloader(config: config, load: load, settings: settings, level: services.logLevel,
                                          notifier: notifier, tls: tls, scripts: scripts, logger: logger)
            reloader.afterReload = { [restamper = areas.restamper, builder = areas.runtimeCollections.builder] in restamper.kick(); builder.kick() }
            loops[0].onSignal(SIGHUP) { reloader.begin() }
        }
        let watchdog = startWatchdog(loops)
        // The stderr sink batches access-log lines; this bounds their delay.
        let accessFlush = services.accessLog.map { log in loops[0].every(.milliseconds(100)) { log.flush() } }

        // Before any loop answers, so whoever sees the port open can read it.
        let report = StartupReport(config: config, addresses: addresses, version: Self.version,
                                   adminSource: areas.admin.source, setupCode: areas.admin.startSetup())
        FileHandle.standardError.write(Data(report.text.utf8))
        let finished = DispatchGroup()
        for loop in loops.dropFirst() {
            finished.enter()
            NamedThread.start("loop-\(loop.index)", answersRequests: true) { loop.run(); finished.leave() }
        }
        logger.info("roostd listening", metadata: [
            "listen": "\(addresses.joined(separator: ","))", "data_dir": "\(config.dataDir)",
            "loops": "\(config.loops)", "readers": "\(config.readers)", "version": "\(Self.version)",
            "allocator": "\(Allocator.description)", "database": "\(config.databaseDescription)",
        ])
        onReady(addresses)
        notifier.ready(status: "Serving on \(addresses.joined(separator: ", ")) with \(config.loops) loops, \(config.readers) readers")
        NamedThread.takeRequestSlice()  // loop 0 runs on this thread (threads started later set their own: NamedThread.start)
        loops[0].run()
        finished.wait()
        watchdog?.cancel()
        accessFlush?.cancel()
        services.accessLog?.flush()

        notifier.status(engine.isEmbedded ? "Stopping: finishing queued writes, checkpointing SQLite" : "Stopping: finishing queued writes")
        lifecycle.stop()
        withExtendedLifetime(lock) {}
        logger.info("roostd stopped")
    }
}

extension RoostServer {
    /// Metrics and the access log for every finished request, on its loop.
    static func observer(_ accessLog: AccessLog?) -> HTTPServer.Observer {
        let metrics = RequestMetrics()
        return { r in
            // Requests refused before routing (a gate's `*` target) carry no route.
            let route = r.route ?? "/*"
            metrics.record(method: r.method.rawValue, route: route, status: r.status, nanoseconds: r.durationNanoseconds)
            // The path as the client sent it, escaped: it reaches stderr, the journal and the console's log.
            accessLog?.record(AccessEntry(method: r.method.rawValue, path: LogFormat.escaped(r.path), route: route, status: r.status,
                                          durationNanoseconds: r.durationNanoseconds, requestID: r.requestID,
                                          remoteAddress: r.remoteAddress))
        }
    }

    /// With `WatchdogSec=`, loop 0's timer pings systemd while every loop
    /// answers its heartbeat (see `Watchdog`).
    func startWatchdog(_ loops: [EventLoop]) -> LoopTimer? {
        guard let timeout = SystemdNotifier.watchdogTimeout() else { return nil }
        let dog = Watchdog(loops: loops.count, timeout: timeout, notifier: services.notifier, logger: logger)
        logger.info("watchdog enabled", metadata: ["timeout_ms": "\(timeout.wholeMilliseconds)"])
        return loops[0].every(dog.pingInterval) {
            dog.tick()
            for loop in loops { loop.execute { dog.beat(loop: loop.index) } }
        }
    }
}
