import Auth
import Files
import Foundation
import Store
import StoreSQLite
import Yams

/// Everything an operator can set. Built from defaults, then a YAML file,
/// then `ROOST_*` environment variables, then command-line flags.
public struct RoostConfig: Sendable {
    /// How far an acknowledged write must have travelled.
    public enum Durability: String, Sendable, CaseIterable {
        /// In the WAL: survives a crash or `kill -9` of the daemon (SQLite `synchronous=NORMAL`).
        case process
        /// fsynced: also survives a power cut (SQLite `synchronous=FULL`).
        case power
    }

    /// The access level of a collection, enforced in SQL by `AccessScope`.
    public typealias Permission = AccessScope.Level

    public struct Collection: Sendable {
        public var permission: Permission?
        public var indexes: [IndexSpec] = []
        /// Declared reference fields and what deleting their target does.
        public var references: [ReferenceSchema.Field] = []
        /// `push_sync: true`: a committed change wakes the devices of users who may read it (silent push).
        public var pushSync = false
        /// Who may read, create, update and delete, as filters (`rules:`, docs/RULES.md); nil: the level alone.
        public var rules: CollectionRules?
        /// The JSON Schema every document written must match (`schema:`, docs/SCHEMAS.md); nil: any JSON.
        public var schema: CollectionSchema?
        /// What deleting a user does to the documents (or files) they created (`on_user_delete`, docs/ACCOUNTS.md).
        public var onUserDelete: UserDeletePolicy = .keep
    }

    /// `collections.<name>.on_user_delete`: what deleting an account does to
    /// the documents whose `_acl.creator` it is, in the background after the
    /// deletion's answer (`AccountJobs`).
    public enum UserDeletePolicy: String, Sendable, CaseIterable {
        /// Deleted through the write path (hooks, feed, webhooks, references).
        case cascade
        /// Kept, with `_acl.creator` cleared (null), so nothing points at the user.
        case anonymise
        /// Left as they are (the default).
        case keep

        /// Parses the setting at `path` (`collections.<name>.on_user_delete`).
        static func parse(_ value: Any, at path: String) throws -> UserDeletePolicy {
            guard let policy = UserDeletePolicy(rawValue: "\(value)") else {
                throw Invalid("\(path) must be one of \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return policy
        }
    }

    /// `host:port` (plain HTTP) or `https://host:port` (TLS, with `tls`).
    public var listen: [String] = ["127.0.0.1:8080"]
    /// The certificate and key of the TLS listeners, and HSTS.
    public var tls = TLS()
    /// Browser origins that may call the API (`cors.origins`; `*` for any, empty for none).
    public var corsOrigins: [String] = []
    /// Whether browsers may send credentials (cookies, HTTP auth) cross-origin (`cors.credentials`).
    public var corsCredentials = false
    /// Peers (addresses or CIDRs) whose `forwardedHeader` names the client.
    public var trustedProxies: [String] = []
    /// `X-Forwarded-For` or `Forwarded`: the one header the trusted proxies write.
    public var forwardedHeader = "X-Forwarded-For"
    /// Seconds a request head (request line and header fields) may take from its first byte.
    public var headerTimeout = 10
    /// Open connections one socket peer address may hold (trusted proxies exempt); 0: no limit.
    public var maxConnectionsPerAddress = 256
    public var dataDir = "./roost-data"
    public var loops = ProcessInfo.processInfo.activeProcessorCount
    public var readers = ProcessInfo.processInfo.activeProcessorCount
    public var queueCapacity = 4096
    /// Milliseconds a read may run on a reader thread; past it, it starts
    /// over on a slow reader, so long scans never take every reader.
    public var readSliceMs = 200
    /// Threads that run the reads that outgrew their slice.
    public var slowReaders = 1
    /// Seconds a read may run at all (a slow reader's limit); past it, 503 `QueryTimeout`.
    public var queryTimeLimit = 10.0
    public var writeBatch = 256
    public var durability: Durability = .process
    public var maxBodyBytes = 1 << 20
    public var logLevel = "info"
    /// `auto` (the journal under systemd, else stderr), `journal` or `stderr`.
    public var logTarget = "auto"
    public var collections: [String: Collection] = [:]
    /// The level of collections the config does not name.
    public var defaultPermission: Permission = .shared
    /// Whether a client's first write to a collection the config does not
    /// name creates it (`auto_create_collections`); false: only declared and
    /// already existing collections take writes, so a typo cannot make one.
    public var autoCreateCollections = true
    /// Session lifetime in seconds; each use renews it (sliding expiry).
    public var sessionLifetime = 30 * 24 * 3600
    /// Seconds the change feed keeps each change (delta sync and live resume reach this far back).
    public var changesRetention = 30 * 24 * 3600
    /// Seconds between heartbeat comments on a live stream.
    public var liveHeartbeat = 15
    /// Unsent bytes a live stream may hold before its slow client is disconnected.
    public var liveBufferBytes = 1 << 20
    /// Open live streams past which new ones get 503.
    public var liveMaxConnections = 10_000
    /// Open live streams one client address may hold (429 past it), so one client cannot take them all.
    public var liveMaxPerAddress = 100
    /// Open live streams one signed-in user may hold (429 past it), whatever addresses they come from.
    public var liveMaxPerAccount = 32
    /// Argon2id cost for passwords (libsodium's named levels).
    public var passwordCost: PasswordHasher.Cost = .interactive
    /// How many password hashes may run at once (each takes the cost's memory).
    public var hashConcurrency = 2
    /// Bytes of SQLite page cache the writer and the readers share (a quarter
    /// for the writer); other connections keep `SQLiteMemory.lookupCacheBytes` each.
    public var sqliteCacheBytes = 32 << 20
    /// Bytes of the database file each reader maps into memory (0, the default:
    /// none). A mapped page is read in place, but each reader maps the file
    /// itself, so RSS counts a page once per reader that touched it (269 MiB
    /// against 79 MiB over the same reads of 200k documents; docs/MEMORY.md),
    /// and copying pages from the kernel's cache measured no slower.
    public var sqliteMmapBytes = 0
    /// Whether a loop answers a GET by id itself while the database is in memory (`LoopReads`).
    public var loopReads = true
    /// A bearer token that acts as administrator; nil disables it.
    public var adminToken: String?
    /// User fields that only their owner and admins see.
    public var privateUserFields: [String] = ["email"]
    /// Largest file upload in bytes (413 above it).
    public var maxUploadBytes = 20 << 20
    /// Most pixels an uploaded image may have (422 above it: decompression bombs).
    public var maxImagePixels = 50_000_000
    /// Thumbnails made for every image, by longest side in pixels; unique, smallest first.
    public var thumbnailSizes = [128, 512]
    /// Longest life in seconds of a signed file URL (`POST /files/:id/url`), and its default.
    public var fileURLMaxTTL = 3600
    /// How uploads are checked before the 201: the container's structure
    /// (fast; the thumbnail worker decodes the pixels later), or a full decode.
    public var uploadValidation: UploadInspector.Validation = .structure
    /// Threads that inspect and store uploads. They mostly wait on fsync, so
    /// there are many: when the disk is slow (a busy virtual machine's can be
    /// ten times slower than usual), uploads per second are about threads ÷
    /// fsync time.
    public var uploadWorkers = max(32, 4 * ProcessInfo.processInfo.activeProcessorCount)
    /// Threads that make thumbnails (each runs one libvips operation at a time).
    public var thumbnailWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// Uploads that may wait for a worker before 503.
    public var uploadQueue = 64
    /// The access level of the file store.
    public var filesPermission: Permission = .shared
    /// Who may read `/metrics` (`metrics_access`).
    public var metricsAccess: MetricsAccess = .local
    public enum MetricsAccess: String, Sendable, Equatable, CaseIterable {
        /// Clients on loopback (after `trusted_proxies`) and the admin token.
        case local
        /// The admin token only.
        case admin
        /// Anyone who can reach the port.
        case `public`
    }
    /// Whether anonymous visitors of `/` see the version and listen addresses (`server_info`).
    public var serverInfoPublic = false
    /// Where file bytes live (`files_store`), and the bucket when `s3` (see RoostConfig+S3.swift).
    public var filesStore: FilesStore = .local
    /// `database_url`: PostgreSQL instead of SQLite in the data directory (nil: SQLite).
    public var databaseURL: String?
    /// `node_id`: this node's name among nodes sharing a database (nil: host and data directory).
    public var configuredNodeID: String?
    /// `claim_lease_seconds`: how long a node's claim on a thumbnail job or a
    /// webhook delivery outlives the node (PostgreSQL; renewed every few seconds).
    public var claimLeaseSeconds = 60
    public var s3 = S3Settings()
    /// The messaging collections (threads and messages) and their built-in hooks.
    public var messaging = Messaging()
    /// Outgoing webhook endpoints and delivery settings.
    public var webhooks = Webhooks()
    /// Direct push to APNs and FCM (`push:`; docs/PUSH.md).
    public var push = Push()
    /// The time budget of a hook, in milliseconds.
    public var hookBudgetMilliseconds = 250
    /// Where the operator's Lua scripts are (`scripts_dir`; empty: none).
    public var scriptsDir = "/etc/roost/scripts"
    /// Budgets and reach of the scripts (`scripts:`).
    public var scripts = Scripts()
    /// Scheduled and on-demand backups.
    public var backups = Backups()
    /// Most entities one delete may cascade to or nullify (409 past it, nothing changed).
    public var referencesMaxCascade = ReferenceSchema.defaultMaxCascade
    /// Budgets per caller for writes, written bytes, batches, uploads, sign-ups, live stream opens and push notifications (429 past them).
    public var rateLimits = RateLimits()
    /// Email accounts, codes and mail (RoostConfig+Accounts.swift).
    public var accounts = AccountSettings()
    /// Sign-in providers of `POST /auth/idtoken` by name (IDToken/RoostConfig+OIDC.swift).
    public var oidcProviders: [String: OIDCProviderConfig] = [:]

    public init() {}

    /// The effective level of `collection`.
    public func permission(of collection: String) -> Permission {
        collections[collection]?.permission ?? defaultPermission
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    /// Applies a YAML configuration file. Unknown keys are errors, so typos never pass silently.
    public mutating func apply(yamlFile path: String) throws {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw Invalid("cannot read config file \(path): \(error.localizedDescription)")
        }
        let loaded: Any?
        do { loaded = try Yams.load(yaml: text) } catch { throw Invalid("config file \(path) is not valid YAML: \(error)") }
        guard let root = loaded as? [String: Any] else {
            if loaded == nil { return }
            throw Invalid("config file \(path) must be a mapping of settings")
        }
        for (key, value) in root {
            if key == "users" {
                guard let map = value as? [String: Any] else { throw Invalid("users must be a mapping") }
                for (k, v) in map {
                    guard k == "private_fields", let list = v as? [Any] else { throw Invalid("users: unknown setting \"\(k)\" (use private_fields: [..])") }
                    privateUserFields = list.map { "\($0)" }
                    // Each is a top-level member name, removed by a JSON path that quotes it.
                    if let bad = privateUserFields.first(where: { $0.isEmpty || $0.contains("\"") || $0.contains("\\")
                                                                 || $0.unicodeScalars.contains { $0.value < 0x20 } }) {
                        throw Invalid("users.private_fields: \"\(bad)\" is not a member name roostd can redact (no quotes, backslashes or control characters)")
                    }
                }
            } else if key == "messaging" {
                try applyMessaging(value)
            } else if key == "webhooks" {
                try applyWebhooks(value)
            } else if key == "scripts" {
                try applyScripts(value)
            } else if key == "push" {
                try applyPush(value)
            } else if key == "rate_limits" {
                try applyRateLimits(value)
            } else if key == "oidc_providers" {
                try applyOIDC(value)
            } else if key == "backups" {
                try applyBackups(value)
            } else if key == "s3" {
                try applyS3(value, source: path)
            } else if key == "cors" {
                try applyCORS(value, source: path)
            } else if key == "tls" {
                try applyTLS(value, source: path)
            } else if key == "collections" {
                guard let map = value as? [String: Any] else { throw Invalid("collections must be a mapping of collection names") }
                for (name, spec) in map { collections[name] = try Self.collection(name, spec) }
            } else {
                try set(key, value, source: path)
            }
        }
    }

    /// Applies `ROOST_<SETTING>` variables, e.g. `ROOST_LISTEN=0.0.0.0:8080,[::]:8080`.
    public mutating func apply(environment: [String: String]) throws {
        for key in Self.scalarKeys {
            if let value = environment["ROOST_" + key.uppercased()] { try set(key, value, source: "ROOST_" + key.uppercased()) }
        }
        try applyS3(environment: environment)
    }

    static var scalarKeys: [String] { settings.map(\.key) }

    /// Sets one scalar setting from YAML, the environment or a flag (`settings`).
    public mutating func set(_ key: String, _ value: Any, source: String) throws {
        guard let setting = Self.settingsByKey[key] else { throw Invalid("\(source): unknown setting \"\(key)\"") }
        try setting.parse(&self, value, source)
    }

    static func collection(_ name: String, _ spec: Any) throws -> Collection {
        if let builtIn = BuiltInRules(rawValue: name) { return try builtIn.collection(spec) }
        guard CollectionName.isValid(name) else { throw Invalid("collections.\(name): not a valid collection name") }
        guard let map = spec as? [String: Any] else { throw Invalid("collections.\(name) must be a mapping") }
        var c = Collection()
        for (key, value) in map {
            switch key {
            case "permission":
                guard let p = Permission(rawValue: "\(value)") else {
                    throw Invalid("collections.\(name).permission must be one of \(Permission.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                c.permission = p
            case "indexes":
                guard let list = value as? [Any] else { throw Invalid("collections.\(name).indexes must be a list") }
                do { c.indexes = try list.map { try IndexSpec(parsing: "\($0)") } } catch {
                    throw Invalid("collections.\(name).indexes: \(error)")
                }
            case "references":
                c.references = try references(name, value)
            case "push_sync":
                guard let b = value as? Bool else { throw Invalid("collections.\(name).push_sync must be true or false") }
                c.pushSync = b
            case "rules":
                c.rules = try rules(name, value)
            case "schema":
                c.schema = try CollectionSchema.read(name, value)
            case "on_user_delete":
                c.onUserDelete = try UserDeletePolicy.parse(value, at: "collections.\(name).on_user_delete")
            default:
                throw Invalid("collections.\(name): unknown setting \"\(key)\"")
            }
        }
        return c
    }
}
