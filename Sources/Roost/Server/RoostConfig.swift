import Auth
import Files
import Foundation
import Store
import Yams

/// Everything an operator can set. Built from defaults, then a YAML file,
/// then `ROOST_*` environment variables, then command-line flags.
public struct RoostConfig: Sendable {
    /// How far an acknowledged write must have travelled.
    public enum Durability: String, Sendable {
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
    }

    /// `host:port` (plain HTTP) or `https://host:port` (TLS, with `tls`).
    public var listen: [String] = ["127.0.0.1:8080"]
    /// The certificate and key of the TLS listeners, and HSTS.
    public var tls = TLS()
    /// Peers (addresses or CIDRs) whose `forwardedHeader` names the client.
    public var trustedProxies: [String] = []
    /// `X-Forwarded-For` or `Forwarded`: the one header the trusted proxies write.
    public var forwardedHeader = "X-Forwarded-For"
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
    /// Bytes of the database file each reader maps into memory (0: none):
    /// reads then use the kernel's page cache in place instead of copying pages.
    public var sqliteMmapBytes = 1 << 30
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
    public enum MetricsAccess: String, Sendable, Equatable {
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
    /// The time budget of a hook, in milliseconds.
    public var hookBudgetMilliseconds = 250
    /// Scheduled and on-demand backups.
    public var backups = Backups()
    /// Most entities one delete may cascade to or nullify (409 past it, nothing changed).
    public var referencesMaxCascade = ReferenceSchema.defaultMaxCascade

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
            } else if key == "backups" {
                try applyBackups(value)
            } else if key == "s3" {
                try applyS3(value, source: path)
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

    static let scalarKeys = ["listen", "data_dir", "loops", "readers", "queue_capacity", "write_batch",
                             "durability", "max_body_bytes", "log_level", "log_target", "default_permission", "session_lifetime", "changes_retention",
                             "live_heartbeat", "live_buffer_bytes", "live_max_connections", "live_max_per_address",
                             "live_max_per_account",
                             "password_cost", "hash_concurrency", "admin_token",
                             "sqlite_cache_bytes", "sqlite_mmap_bytes",
                             "max_upload_bytes", "max_image_pixels", "thumbnail_sizes", "upload_workers", "upload_validation",
                             "thumbnail_workers", "upload_queue", "files_permission", "files_store", "hook_budget_ms",
                             "tls_certificate", "tls_key", "tls_hsts", "trusted_proxies", "forwarded_header",
                             "read_slice_ms", "slow_readers", "query_time_limit", "references_max_cascade", "database_url", "node_id",
                             "claim_lease_seconds", "metrics_access", "server_info"]

    /// Sets one scalar setting from YAML, the environment or a flag.
    public mutating func set(_ key: String, _ value: Any, source: String) throws {
        func int(_ min: Int, _ max: Int) throws -> Int {
            guard let i = (value as? Int) ?? Int("\(value)"), (min...max).contains(i) else {
                throw Invalid("\(source): \(key) must be a whole number from \(min) to \(max)")
            }
            return i
        }
        switch key {
        case "listen":
            if let list = value as? [Any] { listen = try list.map { try Self.listenEntry($0, source: source) } } else {
                listen = "\(value)".split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            }
            guard !listen.isEmpty else { throw Invalid("\(source): listen needs at least one host:port") }
        case "data_dir": dataDir = "\(value)"
        case "loops": loops = try int(1, 64)
        case "readers": readers = try int(1, 256)
        case "queue_capacity": queueCapacity = try int(1, 1_000_000)
        case "read_slice_ms": readSliceMs = try int(10, 600_000)
        case "slow_readers": slowReaders = try int(1, 64)
        case "query_time_limit":
            guard let seconds = (value as? Double) ?? (value as? Int).map(Double.init) ?? Double("\(value)"), seconds >= 0.05, seconds <= 3600 else {
                throw Invalid("\(source): query_time_limit must be a number of seconds from 0.05 to 3600")
            }
            queryTimeLimit = seconds
        case "write_batch": writeBatch = try int(1, 10_000)
        case "max_body_bytes": maxBodyBytes = try int(1024, 1 << 30)
        case "durability":
            guard let d = Durability(rawValue: "\(value)") else { throw Invalid("\(source): durability must be process or power") }
            durability = d
        case "log_level":
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains("\(value)") else { throw Invalid("\(source): log_level must be one of \(levels.joined(separator: ", "))") }
            logLevel = "\(value)"
        case "log_target":
            guard ["auto", "journal", "stderr"].contains("\(value)") else { throw Invalid("\(source): log_target must be auto, journal or stderr") }
            logTarget = "\(value)"
        case "default_permission":
            guard let p = Permission(rawValue: "\(value)") else { throw Invalid("\(source): default_permission must be public, shared, private or readonly") }
            defaultPermission = p
        case "session_lifetime": sessionLifetime = try int(1, 10 * 365 * 24 * 3600)
        case "changes_retention": changesRetention = try int(60, 10 * 365 * 24 * 3600)
        case "live_heartbeat": liveHeartbeat = try int(1, 3600)
        case "live_buffer_bytes": liveBufferBytes = try int(4096, 1 << 30)
        case "live_max_connections": liveMaxConnections = try int(0, 1_000_000)
        case "live_max_per_address": liveMaxPerAddress = try int(1, 1_000_000)
        case "live_max_per_account": liveMaxPerAccount = try int(1, 1_000_000)
        case "hash_concurrency": hashConcurrency = try int(1, 64)
        case "sqlite_cache_bytes": sqliteCacheBytes = try int(1 << 20, 1 << 40)
        case "sqlite_mmap_bytes": sqliteMmapBytes = try int(0, 1 << 40)
        case "password_cost":
            guard let c = PasswordHasher.Cost(rawValue: "\(value)") else { throw Invalid("\(source): password_cost must be owasp, interactive, moderate or sensitive") }
            passwordCost = c
        case "admin_token":
            let token = "\(value)"
            guard token.utf8.count >= 32 else { throw Invalid("\(source): admin_token must be at least 32 characters") }
            adminToken = token
        case "hook_budget_ms": hookBudgetMilliseconds = try int(1, 600_000)
        case "references_max_cascade": referencesMaxCascade = try int(1, 1_000_000)
        case "max_upload_bytes": maxUploadBytes = try int(1, 1 << 30)
        case "max_image_pixels": maxImagePixels = try int(1, 1 << 40)
        case "upload_workers": uploadWorkers = try int(1, 256)
        case "upload_validation":
            guard let v = UploadInspector.Validation(rawValue: "\(value)") else { throw Invalid("\(source): upload_validation must be structure or decode") }
            uploadValidation = v
        case "thumbnail_workers": thumbnailWorkers = try int(1, 256)
        case "upload_queue": uploadQueue = try int(1, 100_000)
        case "thumbnail_sizes":
            let items = (value as? [Any])?.map { "\($0)" } ?? "\(value)".split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            let sizes = items.compactMap { Int($0) }.filter { (16...2048).contains($0) }
            guard sizes.count == items.count else { throw Invalid("\(source): thumbnail_sizes must be a list of sizes from 16 to 2048") }
            thumbnailSizes = Array(Set(sizes)).sorted()
        case "files_permission":
            guard let p = Permission(rawValue: "\(value)") else { throw Invalid("\(source): files_permission must be public, shared, private or readonly") }
            filesPermission = p
        case "metrics_access":
            guard let a = MetricsAccess(rawValue: "\(value)") else { throw Invalid("\(source): metrics_access must be local, admin or public") }
            metricsAccess = a
        case "server_info":
            guard ["admin", "public"].contains("\(value)") else { throw Invalid("\(source): server_info must be admin or public") }
            serverInfoPublic = "\(value)" == "public"
        default:
            guard try setNetwork(key, value, source: source) || setFilesStore(key, value, source: source)
                    || setDatabase(key, value, source: source) else {
                throw Invalid("\(source): unknown setting \"\(key)\"")
            }
        }
    }

    static func collection(_ name: String, _ spec: Any) throws -> Collection {
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
            default:
                throw Invalid("collections.\(name): unknown setting \"\(key)\"")
            }
        }
        return c
    }
}
