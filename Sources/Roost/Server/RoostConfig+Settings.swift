import Auth
import Files
import Foundation
import HTTP

extension RoostConfig {
    /// Every scalar setting, once. The mappings (`collections`, `users`,
    /// `messaging`, `webhooks`, `backups`, `s3`, `tls`) have their own
    /// parsers; `tls`'s members are the `tls_*` settings here, `cors`'s the `cors_*` ones.
    static let settings: [Setting] = [
        .custom("listen", "addresses to serve: host:port, https://host:port or {address, tls, proxy_protocol}", parse: { c, value, source in
            if let list = value as? [Any] { c.listen = try list.map { try RoostConfig.listenEntry($0, source: source) } } else {
                c.listen = Setting.list(value)
            }
            guard !c.listen.isEmpty else { throw Invalid("\(source): listen needs at least one host:port") }
        }, value: { $0.listen.joined(separator: ",") }),
        .custom("data_dir", "the database and files directory", parse: { c, v, _ in c.dataDir = "\(v)" }, value: { $0.dataDir }),
        .int("loops", \.loops, 1...64, "event loop threads").shownDefault("the number of cores"),
        .int("readers", \.readers, 1...256, "reader threads").shownDefault("the number of cores"),
        .int("queue_capacity", \.queueCapacity, 1...1_000_000, "jobs each queue holds before 503"),
        .int("read_slice_ms", \.readSliceMs, 10...600_000, "milliseconds a read may run on a reader before it starts over on a slow reader"),
        .int("slow_readers", \.slowReaders, 1...64, "threads for reads past their slice"),
        .custom("loop_reads", "whether an event loop answers a GET by id itself (SQLite) from pages already in memory; a read that would wait goes to a reader (false: every read does)",
                parse: { c, value, source in c.loopReads = try Setting.bool(value, key: "loop_reads", source: source) },
                value: { "\($0.loopReads)" }),
        .custom("query_time_limit", "seconds any read may run before 503 QueryTimeout", parse: { c, value, source in
            guard let seconds = (value as? Double) ?? (value as? Int).map(Double.init) ?? Double("\(value)"), seconds >= 0.05, seconds <= 3600 else {
                throw Invalid("\(source): query_time_limit must be a number of seconds from 0.05 to 3600")
            }
            c.queryTimeLimit = seconds
        }, value: { "\($0.queryTimeLimit)" }),
        .int("write_batch", \.writeBatch, 1...10_000, "writes per group commit"),
        .choice("durability", \.durability, "process (survives kill -9) or power (fsync per commit)"),
        .int("max_body_bytes", \.maxBodyBytes, 1024...(1 << 30), "largest JSON body"),
        .custom("log_level", "swift-log level", .applied, parse: { c, value, source in
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains("\(value)") else { throw Invalid("\(source): log_level must be one of \(levels.joined(separator: ", "))") }
            c.logLevel = "\(value)"
        }, value: { $0.logLevel }),
        .custom("log_target", "auto, journal or stderr", parse: { c, value, source in
            guard ["auto", "journal", "stderr"].contains("\(value)") else { throw Invalid("\(source): log_target must be auto, journal or stderr") }
            c.logTarget = "\(value)"
        }, value: { $0.logTarget }),
        .choice("default_permission", \.defaultPermission, "level of collections the config does not name", .applied),
        .custom("auto_create_collections", "whether a client's first write to a collection the config does not name creates it (false: 404)", .applied,
                parse: { c, value, source in
            c.autoCreateCollections = try Setting.bool(value, key: "auto_create_collections", source: source)
        }, value: { "\($0.autoCreateCollections)" }),
        .int("session_lifetime", \.sessionLifetime, 1...(10 * 365 * 24 * 3600), "seconds a session lives after its last use"),
        .int("changes_retention", \.changesRetention, 60...(10 * 365 * 24 * 3600), "seconds the change feed keeps each change"),
        .int("live_heartbeat", \.liveHeartbeat, 1...3600, "seconds between live-stream heartbeats"),
        .int("live_buffer_bytes", \.liveBufferBytes, 4096...(1 << 30), "unsent bytes before a slow live client is dropped"),
        .int("live_max_connections", \.liveMaxConnections, 0...1_000_000, "open live streams before 503"),
        .int("live_max_per_address", \.liveMaxPerAddress, 1...1_000_000, "open live streams per client address before 429"),
        .int("live_max_per_account", \.liveMaxPerAccount, 1...1_000_000, "open live streams per signed-in user before 429"),
        .choice("password_cost", \.passwordCost, "Argon2id cost"),
        .int("hash_concurrency", \.hashConcurrency, 1...64, "password hashes that may run at once"),
        .custom("admin_token", "the operator's bearer token (at least 32 characters)", parse: { c, value, source in
            let token = "\(value)"
            guard token.utf8.count >= 32 else { throw Invalid("\(source): admin_token must be at least 32 characters") }
            c.adminToken = token
        }, value: { $0.adminToken.map(SessionToken.hash) ?? "" }, secret: true),
        .int("sqlite_cache_bytes", \.sqliteCacheBytes, (1 << 20)...(1 << 40), "SQLite page cache shared by the writer and readers"),
        .int("sqlite_mmap_bytes", \.sqliteMmapBytes, 0...(1 << 40), "bytes of the database each reader maps"),
        .int("max_upload_bytes", \.maxUploadBytes, 1...(1 << 30), "largest file upload"),
        .int("max_image_pixels", \.maxImagePixels, 1...(1 << 40), "most pixels an uploaded image may have"),
        .custom("thumbnail_sizes", "thumbnails made for every image, by longest side", parse: { c, value, source in
            let items = Setting.list(value)
            let sizes = items.compactMap { Int($0) }.filter { (16...2048).contains($0) }
            guard sizes.count == items.count else { throw Invalid("\(source): thumbnail_sizes must be a list of sizes from 16 to 2048") }
            c.thumbnailSizes = Array(Set(sizes)).sorted()
        }, value: { $0.thumbnailSizes.map(String.init).joined(separator: ",") }),
        .int("file_url_max_ttl", \.fileURLMaxTTL, 1...86_400, "longest life in seconds of a signed file URL (also its default)"),
        .int("upload_workers", \.uploadWorkers, 1...256, "threads that store uploads").shownDefault("4 × cores, at least 32"),
        .choice("upload_validation", \.uploadValidation, "structure or decode"),
        .int("thumbnail_workers", \.thumbnailWorkers, 1...256, "threads that run libvips").shownDefault("the number of cores"),
        .int("upload_queue", \.uploadQueue, 1...100_000, "uploads that may wait for a worker before 503"),
        .choice("files_permission", \.filesPermission, "access level of the file store"),
        .choice("files_store", \.filesStore, "local or s3"),
        .int("hook_budget_ms", \.hookBudgetMilliseconds, 1...600_000, "the time budget of each of the app team's hooks (built-in ones have none)"),
        .custom("scripts_dir", "the directory of Lua scripts (*.lua, loaded in name order; SIGHUP reloads them)", .applied,
                parse: { c, v, _ in c.scriptsDir = "\(v)".trimmingCharacters(in: .whitespaces) }, value: { $0.scriptsDir }),
        .custom("tls_certificate", "PEM certificate chain of the https:// listeners (SIGHUP reloads it)", .applied,
                parse: { c, v, _ in c.tls.certificate = RoostConfig.expandingCredentials("\(v)") }, value: { $0.tls.certificate ?? "" }),
        .custom("tls_key", "PEM private key of the https:// listeners (SIGHUP reloads it)", .applied,
                parse: { c, v, _ in c.tls.key = RoostConfig.expandingCredentials("\(v)") }, value: { $0.tls.key ?? "" }),
        .custom("tls_hsts", "the Strict-Transport-Security header of HTTPS answers (off: none)", parse: { c, value, _ in
            let text = "\(value)"
            c.tls.hsts = (value as? Bool == false || text.isEmpty || text == "off" || text == "false") ? nil : text
        }, value: { $0.tls.hsts ?? "off" }),
        .custom("cors_origins", "browser origins that may call the API: * for any, or scheme://host[:port] each; empty: none", parse: { c, value, source in
            c.corsOrigins = try Setting.list(value).map { try RoostConfig.corsOrigin($0, source: source) }
        }, value: { $0.corsOrigins.joined(separator: ",") }),
        .custom("cors_credentials", "whether browsers may send cookies or HTTP authentication cross-origin (needs listed origins)", parse: { c, value, source in
            guard let b = (value as? Bool) ?? ["true": true, "false": false][("\(value)").lowercased()] else {
                throw Invalid("\(source): cors.credentials must be true or false")
            }
            c.corsCredentials = b
        }, value: { "\($0.corsCredentials)" }),
        .custom("trusted_proxies", "peers whose forwarding header names the client", parse: { c, value, source in
            let items = Setting.list(value)
            do { _ = try TrustedProxies(items) } catch { throw Invalid("\(source): trusted_proxies: \(error)") }
            c.trustedProxies = items
        }, value: { $0.trustedProxies.joined(separator: ",") }),
        .custom("forwarded_header", "X-Forwarded-For or Forwarded", parse: { c, value, source in
            guard let header = TrustedProxies.Header(named: "\(value)") else {
                throw Invalid("\(source): forwarded_header must be X-Forwarded-For or Forwarded")
            }
            c.forwardedHeader = header.name
        }, value: { $0.forwardedHeader }),
        .int("header_timeout", \.headerTimeout, 1...3600, "seconds a request head may take to arrive, from its first byte"),
        .int("max_connections_per_address", \.maxConnectionsPerAddress, 0...1_000_000, "open connections per socket peer address (0: no limit; trusted proxies exempt)"),
        .int("references_max_cascade", \.referencesMaxCascade, 1...1_000_000, "most entities one delete may cascade to"),
        .custom("database_url", "PostgreSQL instead of SQLite", parse: { c, value, source in
            let url = "\(value)".trimmingCharacters(in: .whitespaces)
            guard url.isEmpty || url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw Invalid("\(source): database_url must start with postgres:// or postgresql:// (or be empty for SQLite)")
            }
            c.databaseURL = url.isEmpty ? nil : url
        }, value: { $0.databaseURL.map(RoostConfig.redactedURL) ?? "" }),
        .custom("node_id", "this node's name among nodes sharing a database", parse: { c, value, source in
            let id = "\(value)".trimmingCharacters(in: .whitespaces)
            guard !id.isEmpty, id.utf8.count <= 200 else { throw Invalid("\(source): node_id must be 1 to 200 bytes") }
            c.configuredNodeID = id
        }, value: { $0.configuredNodeID ?? "" }),
        .int("claim_lease_seconds", \.claimLeaseSeconds, 10...3600, "how long a node's claim on a job outlives it"),
        .choice("metrics_access", \.metricsAccess, "who may read /metrics: local, admin or public"),
        .custom("server_info", "who sees the version and listen addresses on /: admin or public", parse: { c, value, source in
            guard ["admin", "public"].contains("\(value)") else { throw Invalid("\(source): server_info must be admin or public") }
            c.serverInfoPublic = "\(value)" == "public"
        }, value: { $0.serverInfoPublic ? "public" : "admin" }),
    ] + accountSettings

    /// The table by key.
    static let settingsByKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })

    /// `key: value` for every scalar setting, in the table's order (`check-config`; secrets shown only as set).
    public var settingLines: [String] {
        Self.settings.map { setting in
            let value = setting.value(self)
            return "\(setting.key): " + (setting.isSecret ? (value.isEmpty ? "unset" : "set") : value)
        }
    }

    /// The scalar settings whose running values differ between `old` and `new`.
    static func changedSettings(_ old: RoostConfig, _ new: RoostConfig) -> [Setting] {
        settings.filter { $0.value(old) != $0.value(new) }
    }
}
