import Auth
import EventLoop
import Foundation
import HTTP
import Logging
import Store

/// The composition root: opens the store, starts the worker pools and the
/// event loops, and runs until SIGTERM or SIGINT.
///
/// Threads: loop 0 runs on the caller's thread, loops 1… on their own;
/// `readers` reader threads; one writer thread.
public final class RoostServer {
    public static let version = "0.1.0"

    let config: RoostConfig
    let logger: Logger

    public init(config: RoostConfig, logger: Logger) {
        self.config = config
        self.logger = logger
    }

    /// Starts everything, calls `onReady` with the bound addresses, and blocks until shutdown.
    public func run(onReady: ([String]) -> Void = { _ in }) throws {
        EventLoop.prepareProcess()
        try FileManager.default.createDirectory(atPath: config.dataDir, withIntermediateDirectories: true)
        let lock = try DataDirectoryLock(directory: config.dataDir)
        let databasePath = config.dataDir + "/roost.db"

        let writer = try DocumentWriter(path: databasePath, synchronous: config.durability == .power ? "FULL" : "NORMAL",
                                        ids: DocumentID(), logger: logger)
        try writer.migrate()
        for (name, collection) in config.collections.sorted(by: { $0.key < $1.key }) {
            try writer.applyIndexes(Set(collection.indexes), on: name)
        }

        let pools = StorePools(databasePath: databasePath, writer: writer, config: config, logger: logger)
        try pools.start()

        let sockets = try config.listen.map { try ListeningSocket.bind($0) }
        let addresses = sockets.map(\.description)
        let loops = (0..<config.loops).map { EventLoop(index: $0) }
        let lifetime = Int64(config.sessionLifetime)
        let access = AccessPolicy(
            authenticator: Authenticator(adminTokenHash: config.adminToken.map(SessionToken.hash), sessionLifetime: lifetime, logger: logger),
            config: config,
            renew: { hash in pools.background { try $0.renewSession(tokenHash: hash, now: Authenticator.now, lifetime: lifetime) } })
        let handlers = CollectionHandlers(pools: pools, maxBodyBytes: config.maxBodyBytes, access: access)
        let accounts = AccountHandlers(pools: pools, collections: handlers, access: access,
                                       hasher: PasswordHasher(cost: config.passwordCost), sessionLifetime: lifetime)
        let router = Router(collections: handlers, accounts: accounts, pools: pools,
                            info: ServerInfo(version: Self.version, listen: addresses, startedAt: Timestamp.now()))
        // evhttp's own cap is a backstop above ours, so ours answers with JSON.
        let server = HTTPServer(loops: loops, sockets: sockets, maxBodyBytes: config.maxBodyBytes * 2 + 65536, logger: logger) { request, out in
            router.handle(request, out)
        }
        for s in sockets { close(s.fd) }

        let shutdown = GracefulShutdown(loops: loops, server: server, logger: logger)
        loops[0].onSignal(SIGTERM) { shutdown.begin(reason: "SIGTERM") }
        loops[0].onSignal(SIGINT) { shutdown.begin(reason: "SIGINT") }

        let finished = DispatchGroup()
        for loop in loops.dropFirst() {
            finished.enter()
            let thread = Thread { loop.run(); finished.leave() }
            thread.name = "loop-\(loop.index)"
            thread.start()
        }
        logger.info("roostd listening", metadata: [
            "listen": "\(addresses.joined(separator: ","))", "data_dir": "\(config.dataDir)",
            "loops": "\(config.loops)", "readers": "\(config.readers)", "version": "\(Self.version)",
        ])
        onReady(addresses)
        loops[0].run()
        finished.wait()

        pools.shutdown()
        writer.checkpoint()
        withExtendedLifetime(lock) {}
        logger.info("roostd stopped")
    }
}
