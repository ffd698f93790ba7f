import Auth
import Backup
import Files
import Jobs
import Hooks
import Logging
import Store

/// What answers requests, built from a config in one place: the access
/// policy and its job seam, the hooks, every area's handlers and the route
/// table. `RoostServer` builds it and then starts its services in order
/// (`RoostServer+Services.swift`); the in-process tests (`RouterFixture`) build the
/// very same, so an area wired here is routed in both.
struct ServerComposition {
    let jobs: CallerJobs
    let hooks: HookServices
    let files: FileHandlers
    let backups: BackupService
    let hub: LiveHub
    let stats: ConsoleStats
    let router: Router
    /// The operator's credential and its first-run setup.
    let admin: AdminCredential
    /// Account mail (verification, reset, email change), sent after commit.
    let mail: MailOutbox
    /// Sign-in providers (`POST /auth/idtoken`) and their verification pool.
    let oidc: OIDCProviders
    let scripts: RoostScripts
    /// Keeps rows' read-rule stamps current after start-up and reloads.
    let restamper: RuleRestamper
    /// Collections set up at run time: the settings sync, index builds, emptying.
    let runtimeCollections: CollectionAdminJobs
    /// What account deletions and Apple sign-ins leave for later (`_account_jobs`).
    let accountJobs: AccountJobs

    /// Builds every area on `pools`; starts nothing (`RoostServer.services` does).
    /// - Parameter objects: where file bytes live (`FileHandlers.objectStore`).
    /// - Parameter wakeOutbox: wakes the webhook and push dispatchers after a commit that queued deliveries.
    init(config: RoostConfig, settings: ReloadableSettings, pools: StorePools, removals: DeferredRemovals, objects: any ObjectStore,
         info: ServerInfo, state: ServerState, wakeOutbox: @escaping @Sendable () -> Void = {}, logger: Logger) throws {
        let engine = pools.engine
        let lifetime = Int64(config.sessionLifetime)
        let admin = try AdminCredential(configuredToken: config.adminToken, dataDir: config.dataDir)
        self.admin = admin
        let access = AccessPolicy(
            authenticator: Authenticator(admin: admin, sessionLifetime: lifetime, logger: logger),
            settings: settings,
            renew: { hash in pools.background { try $0.renewSession(tokenHash: hash, now: Authenticator.now, lifetime: lifetime) } })
        let jobs = CallerJobs(pools: pools, access: access)
        self.jobs = jobs
        let outboxDirty = LockedBox(false)
        let scripts = RoostScripts(config: config, pools: pools, access: access, logger: logger)
        self.scripts = scripts
        let registry = BuiltInHooks.emptyRegistry(config: config, logger: logger)
        let hooks = HookServices(registry: registry, outboxDirty: outboxDirty, wakeOutbox: wakeOutbox, scripts: scripts, logger: logger)
        BuiltInHooks.register(into: registry, config: config, settings: settings, outboxDirty: outboxDirty, services: hooks) { registry in
            ScriptHooks.register(into: registry, runtime: scripts.runtime, access: access, services: hooks, logger: logger)
        }
        scripts.hooks.set(hooks)
        self.hooks = hooks
        let collections = CollectionHandlers(jobs: jobs, maxBodyBytes: config.maxBodyBytes, hooks: hooks)
        let files = FileHandlers(config: config, objects: objects, jobs: jobs, logger: logger)
        self.files = files
        let backups = BackupService(settings: config.backups, dataDir: config.dataDir, removals: removals, logger: logger)
        backups.objectStore = config.objectStoreLocation
        backups.embeddedDatabase = engine.isEmbedded
        self.backups = backups
        let hub = LiveHub(engine: engine, access: access, filesLevel: files.level, config: config, logger: logger)
        self.hub = hub
        let mail = try MailOutbox(settings: config.accounts, fallbackBaseURL: Self.baseURL(info.listen), logger: logger)
        self.mail = mail
        let oidc = OIDCProviders(config.oidcProviders, logger: logger)
        self.oidc = oidc
        let appleSettings = config.oidcProviders[AppleTokens.provider]?.apple
        let apple = try appleSettings.flatMap { $0.isSet ? try AppleTokens(settings: $0) : nil }
        let accountJobs = AccountJobs(pools: pools, purge: AccountPurge(pools: pools, hooks: hooks, files: files, logger: logger),
                                      apple: apple, settings: settings, logger: logger)
        self.accountJobs = accountJobs
        let stats = ConsoleStats(pools: pools, files: files, liveStreams: { hub.openStreams }, logger: logger)
        self.stats = stats
        restamper = RuleRestamper(pools: pools, logger: logger)
        let runtimeCollections = CollectionAdminJobs(
            callers: jobs, sync: CollectionSettingsSync(pools: pools, settings: settings, logger: logger),
            builder: IndexBuilder(pools: pools, settings: settings, dropGrace: config.queryTimeLimit + 1, logger: logger),
            emptier: CollectionEmptier(pools: pools, logger: logger))
        self.runtimeCollections = runtimeCollections
        router = Router(RouteAreas(
            collections: collections, batch: BatchHandler(collections: collections, logger: logger),
            live: LiveHandlers(jobs: jobs, hub: hub),
            accounts: AccountHandlers(jobs: jobs, collections: collections, hasher: PasswordHasher(cost: config.passwordCost),
                                      sessionLifetime: lifetime, mail: mail, oidc: oidc, accountJobs: accountJobs),
            files: files, push: PushHandlers(jobs: jobs, collections: collections),
            admin: WebhookHandlers(jobs: jobs, collections: collections, hooks: hooks, scripts: scripts),
            roles: RoleHandlers(jobs: jobs, collections: collections),
            backups: BackupHandlers(service: backups, jobs: jobs),
            console: ConsoleAdminHandlers(jobs: jobs, stats: stats, logs: .shared),
            collectionsAdmin: CollectionAdminHandlers(jobs: runtimeCollections, maxBodyBytes: config.maxBodyBytes),
            setup: AdminSetupHandlers(admin: admin, pools: pools, logger: logger),
            system: SystemHandlers(jobs: jobs, info: info, metrics: MetricsEndpoint(pools: pools), state: state),
            scripts: scripts))
    }

    /// Links in mails when `public_url` is unset: the first listen address.
    static func baseURL(_ listen: [String]) -> String {
        guard var first = listen.first else { return "http://localhost" }
        if let space = first.firstIndex(of: " ") { first = String(first[..<space]) }
        return first.hasPrefix("https://") ? first : "http://" + first
    }
}
