import Backup
import Jobs
import Push
import Store
import StoreSQLite
import StorePostgres
import Webhooks

extension RoostServer {
    /// The outbox dispatchers, built before the hooks (which wake them after a
    /// commit that queued deliveries) and started as services.
    struct OutboxDispatchers {
        let webhooks: WebhookDispatcher
        /// Direct push (APNs, FCM); nil without a provider.
        let pushes: PushDispatcher?

        /// Wakes both; safe before they start.
        var wake: @Sendable () -> Void {
            let (webhooks, pushes) = (webhooks, pushes)
            return { webhooks.wake(); pushes?.wake() }
        }
    }

    /// Every service of a running daemon in start order; they stop in
    /// reverse, once the loops have stopped: what produces work (commit
    /// watch, compactor, live hub, deliveries, scripts) stops before what it
    /// hands work to (the writer's pools), and the final checkpoint is last.
    func lifecycleServices(engine: any StoreEngine, writer: any DocumentWriting, pools: StorePools, backupHold: BackupHold,
                           areas: ServerComposition, outbox: OutboxDispatchers) -> [any RoostService] {
        let (config, logger) = (self.config, self.logger)
        let (hooks, scripts, hub, files, backups, stats, mail, oidc) =
            (areas.hooks, areas.scripts, areas.hub, areas.files, areas.backups, areas.stats, areas.mail, areas.oidc)
        // SQLite's WAL checkpoints; PostgreSQL checkpoints itself.
        let checkpointer = (engine as? SQLiteEngine).map { Checkpointer(path: $0.path, logger: logger) }
        checkpointer?.mayRestart = { !backupHold.isBackupRunning }
        let pushes = outbox.pushes
        let sync = makePushSync(engine: engine, pools: pools, hooks: hooks, access: hub.access, wakePushes: { pushes?.wake() })
        let guests = config.accounts.anonymousAccounts
            ? AnonymousSweeper(pools: pools, hooks: hooks, maxIdle: Int64(config.accounts.anonymousMaxIdle), logger: logger) : nil
        let compactor = FeedCompactor(pools: pools, retention: Int64(config.changesRetention), logger: logger)
        let restamper = areas.restamper
        let runtime = areas.runtimeCollections
        // A change to the collections set up at run time (this node's or another's): rules' stamps, indexes, references.
        let references = LockedBox(Self.settingsReferences(config, areas))
        runtime.sync.changed.set {
            restamper.kick()
            runtime.builder.kick()
            let schema = Self.settingsReferences(config, areas)
            guard schema.byCollection != references.get().byCollection else { return }
            references.set(schema)
            if case .failure(let error)? = pools.onWriter({ writer in try writer.applyReferences(schema) }) {
                logger.error("declared references not applied", metadata: ["error": "\(error)"])
            }
        }
        // Other nodes' commits (PostgreSQL) wake the live streams too.
        let commitWatch = LockedBox<(any CommitWatch)?>(nil)
        let node = config.configuredNodeID ?? PostgresNode.id
        let optional: [(any RoostService)?] = [
            ServiceStep("database", stop: { writer.checkpoint() }),
            checkpointer.map { c in ServiceStep("checkpointer", start: { c.start() }, stop: { c.stop() }) },
            ServiceStep("pools", start: { try pools.start() }, stop: { pools.shutdown() }),
            ServiceStep("after-hooks", start: { try hooks.after.start() }, stop: { hooks.after.shutdown() }),
            ServiceStep("scripts", start: { try scripts.start(directory: config.scriptsDir, node: node) }, stop: { scripts.shutdown() }),
            pushes.map { p in ServiceStep("push", start: { try p.start() }, stop: { p.shutdown() }) },
            sync.map { s in ServiceStep("push-sync", start: { try s.start() }, stop: { s.shutdown() }) },
            guests.map { g in ServiceStep("guest-sweeper", start: { g.start() }, stop: { g.stop() }) },
            ServiceStep("oidc", start: { try oidc.start() }, stop: { oidc.shutdown() }),
            ServiceStep("mail", start: { try mail.start(pools: pools) }, stop: { mail.shutdown() }),
            ServiceStep("account-jobs", start: { areas.accountJobs.start() }, stop: { areas.accountJobs.shutdown() }),
            ServiceStep("webhooks", start: { try outbox.webhooks.start() }, stop: { outbox.webhooks.shutdown() }),
            ServiceStep("backups", start: { backups.start() }, stop: { backups.stop() }),
            ServiceStep("files", start: { try files.start() }, stop: { files.shutdown() }),
            ServiceStep("console-stats", start: { stats.start() }, stop: { stats.stop() }),
            // Its streams end when the drain begins (`GracefulShutdown.onBegin`), before the loops stop.
            ServiceStep("live", start: {
                try hub.start()
                pools.afterCommit.set { hub.wake(); sync?.wake() }
                pools.sessionsRevoked.set { hub.sessionsChanged() }
            }),
            ServiceStep("feed-compactor", start: { compactor.start() }, stop: { compactor.stop() }),
            ServiceStep("rule-restamper", start: { restamper.start() }, stop: { restamper.stop() }),
            ServiceStep("collection-sync", start: { runtime.sync.start() }, stop: { runtime.sync.stop() }),
            ServiceStep("index-builder", start: { runtime.builder.start() }, stop: { runtime.builder.stop() }),
            engine.isEmbedded ? nil : ServiceStep("commit-watch", start: { commitWatch.set(try engine.watchCommits(logger: logger) { hub.wake() }) },
                                                  stop: { commitWatch.get()?.stop() }),
        ]
        return optional.compactMap { $0 }
    }

    /// The references every collection declares, the config's and those set up at run time.
    static func settingsReferences(_ config: RoostConfig, _ areas: ServerComposition) -> ReferenceSchema {
        let settings = areas.jobs.access.settings
        return config.referenceSchema(collections: settings.collections, scope: Self.scope(settings))
    }
}
