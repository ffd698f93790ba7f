import Daemon
import Foundation
import Logging
import Push
import Store
import Webhooks

extension RoostServer {
    /// Direct push delivery (not started) when `push.apns` or `push.fcm` is set:
    /// reads the credentials (files or the environment, never the YAML) and
    /// fails the start when they cannot be used. Nil when no provider is set.
    func makePushDispatcher(engine: any StoreEngine, pools: StorePools) throws -> PushDispatcher? {
        let push = config.push
        guard push.apns != nil || push.fcm != nil else { return nil }
        let environment = ProcessInfo.processInfo.environment
        var apns: APNsProvider?
        if let a = push.apns {
            let pem = try PushCredentials.read(file: a.keyFile, variable: "ROOST_APNS_KEY", what: "the APNs key (.p8)", environment: environment)
            var settings = APNsProvider.Settings(keyID: a.keyID, teamID: a.teamID, topic: a.topic)
            settings.productionURL = a.url
            settings.sandboxURL = a.sandboxURL
            settings.tokenLifetime = a.tokenLifetime
            apns = try APNsProvider(settings: settings, keyPEM: pem)
        }
        var fcm: FCMProvider?
        if let f = push.fcm {
            let json = try PushCredentials.read(file: f.serviceAccountFile, variable: "ROOST_FCM_SERVICE_ACCOUNT",
                                                what: "the FCM service account", environment: environment)
            var settings = FCMProvider.Settings()
            settings.endpoint = f.url
            settings.tokenURL = f.tokenURL
            fcm = try FCMProvider(account: FCMProvider.ServiceAccount(json: json), settings: settings)
        }
        var settings = PushDispatcher.Settings()
        settings.schedule = RetrySchedule(delays: push.retrySchedule)
        // A batch may wait for two sends and its record: within a PostgreSQL claim's lease,
        // so another node does not take (and send again) pushes still in flight.
        let timeout = min(push.timeout, Double(config.claimLeaseSeconds) / 3)
        if timeout < push.timeout {
            logger.warning("push.timeout is capped at a third of claim_lease_seconds", metadata: ["timeout": "\(timeout)"])
        }
        settings.timeoutMilliseconds = Int(timeout * 1000)
        settings.caFile = push.caFile
        settings.maxRate = push.maxRate > 0 ? push.maxRate : nil
        settings.staleAfterSeconds = push.tokenMaxAgeDays > 0 ? max(1, Int(push.tokenMaxAgeDays * 86_400)) : nil
        let logger = self.logger
        let opened = RoostMetrics.pushConnections()
        // Made once, as the webhook dispatcher's: making a counter looks it up in the registry and checks its
        // HELP text, which cost the push thread a tenth of its time when done for every push.
        let counters = Dictionary(uniqueKeysWithValues: RoostMetrics.pushProviders.flatMap { provider in
            RoostMetrics.pushOutcomes.map { ("\(provider)/\($0)", RoostMetrics.pushDeliveries(provider: provider, outcome: $0)) }
        })
        let dispatcher = PushDispatcher(
            engine: engine, settings: settings, apns: apns, fcm: fcm,
            record: { write, done in Self.recordPush(pools, write, done, logger) },
            onOutcome: { provider, outcome in
                (counters["\(provider)/\(outcome)"] ?? RoostMetrics.pushDeliveries(provider: provider, outcome: outcome)).increment()
            },
            onRemoval: { reason in RoostMetrics.pushTokensRemoved(reason: reason).increment() },
            onConnectionsOpened: { opened.increment(by: Int64($0)) },
            logger: logger)
        logger.info("direct push enabled", metadata: ["apns": "\(apns != nil)", "fcm": "\(fcm != nil)"])
        return dispatcher
    }
}

extension RoostServer {
    /// Silent sync pushes (not started) when a provider is set and some collection has `push_sync: true`.
    func makePushSync(engine: any StoreEngine, pools: StorePools, hooks: HookServices, access: AccessPolicy,
                       wakePushes: @escaping @Sendable () -> Void) -> PushSyncFanout? {
        let collections = Set(config.collections.filter { $0.value.pushSync }.keys)
        let sender = PushSender(config: config.push, outboxDirty: hooks.outboxDirty)
        guard !collections.isEmpty, sender.isEnabled else {
            if !collections.isEmpty { logger.warning("push_sync is set but no push provider (push.apns, push.fcm) is configured") }
            return nil
        }
        let logger = self.logger
        let fanout = PushSyncFanout(engine: engine, access: access, collections: collections, interval: config.push.syncInterval, sender: sender,
                                    record: { write, done in
                                        Self.record(pools, { try write($0) }, { done(); wakePushes() }, logger)
                                    }, positionFile: config.dataDir + "/push-sync.position", logger: logger)
        return fanout
    }
}

extension RoostServer {
    /// Runs a push dispatcher's write in the writer and tells whether it
    /// committed (a failure holds the batch back instead of resending it at once).
    static func recordPush(_ pools: StorePools, _ write: @escaping @Sendable (any PushWriting) throws -> Void,
                           _ done: @escaping @Sendable (Bool) -> Void, _ logger: Logger) {
        let job = StorePools.WriteJob(operation: { writer in try write(writer) }) { result in
            if case .failure(let error) = result { logger.error("cannot record push attempts", metadata: ["error": "\(error)"]) }
            if case .success = result { done(true) } else { done(false) }
        }
        for _ in 0..<200 {
            if pools.writer.submit(job) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        logger.warning("writer queue stayed full; push attempts not recorded (held back, then sent again)")
        done(false)
    }
}

/// Reads a push credential: the environment variable's text when set, else
/// the file (a relative path is under systemd's `$CREDENTIALS_DIRECTORY`,
/// as `LoadCredential=` puts it). The text itself is never logged.
enum PushCredentials {
    static func read(file: String?, variable: String, what: String, environment: [String: String]) throws -> String {
        if let text = environment[variable], !text.isEmpty { return text }
        guard let file else { throw PushError("\(what): set \(variable) or name a file in the push settings") }
        var path = file
        if !file.hasPrefix("/"), let directory = environment["CREDENTIALS_DIRECTORY"] { path = directory + "/" + file }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw PushError("\(what): cannot read \(path)") }
        return text
    }
}
