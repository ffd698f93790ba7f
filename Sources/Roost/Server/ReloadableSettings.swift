import Foundation
import Store

/// The settings a SIGHUP can change without a restart, shared by every
/// thread: collection permissions and private user fields. Readers take a
/// snapshot under a lock (one uncontended lock per access check).
final class ReloadableSettings: @unchecked Sendable {
    struct Snapshot: Sendable {
        var permissions: [String: RoostConfig.Permission]
        var defaultPermission: RoostConfig.Permission
        var privateUserFields: [String]
        /// Collections only the server (its hooks) and admins write: the messaging threads.
        var serverWritten: Set<String> = []

        init(_ config: RoostConfig) {
            permissions = config.collections.compactMapValues(\.permission)
            // Threads and messages are private unless the config says otherwise:
            // only the participants (their ACL) may read them.
            if config.messaging.enabled {
                for name in [config.messaging.threads, config.messaging.messages] where permissions[name] == nil {
                    permissions[name] = .private
                }
                serverWritten.insert(config.messaging.threads)
            }
            defaultPermission = config.defaultPermission
            privateUserFields = config.privateUserFields
        }

        func permission(of collection: String) -> RoostConfig.Permission {
            permissions[collection] ?? defaultPermission
        }
    }

    private let lock = NSLock()
    private var current: Snapshot

    init(_ config: RoostConfig) { current = Snapshot(config) }

    var snapshot: Snapshot { lock.lock(); defer { lock.unlock() }; return current }

    func permission(of collection: String) -> RoostConfig.Permission { snapshot.permission(of: collection) }

    var privateUserFields: [String] { snapshot.privateUserFields }

    func isServerWritten(_ collection: String) -> Bool { snapshot.serverWritten.contains(collection) }

    /// Installs `config`'s reloadable settings; returns what changed, one
    /// human-readable line per change.
    @discardableResult
    func apply(_ config: RoostConfig) -> [String] {
        let new = Snapshot(config)
        lock.lock()
        let old = current
        current = new
        lock.unlock()
        var changes: [String] = []
        if old.defaultPermission != new.defaultPermission {
            changes.append("default_permission: \(old.defaultPermission.rawValue) → \(new.defaultPermission.rawValue)")
        }
        for name in Set(old.permissions.keys).union(new.permissions.keys).sorted()
        where old.permission(of: name) != new.permission(of: name) {
            changes.append("collections.\(name).permission: \(old.permission(of: name).rawValue) → \(new.permission(of: name).rawValue)")
        }
        if old.privateUserFields != new.privateUserFields {
            changes.append("users.private_fields: \(old.privateUserFields) → \(new.privateUserFields)")
        }
        return changes
    }

    /// Settings that differ between `old` and `new` but only take effect on restart.
    static func needsRestart(_ old: RoostConfig, _ new: RoostConfig) -> [String] {
        var names: [String] = []
        func check<T: Equatable>(_ name: String, _ path: KeyPath<RoostConfig, T>) {
            if old[keyPath: path] != new[keyPath: path] { names.append(name) }
        }
        check("listen", \.listen)
        check("data_dir", \.dataDir)
        check("loops", \.loops)
        check("readers", \.readers)
        check("queue_capacity", \.queueCapacity)
        check("write_batch", \.writeBatch)
        check("durability", \.durability)
        check("max_body_bytes", \.maxBodyBytes)
        check("session_lifetime", \.sessionLifetime)
        check("password_cost", \.passwordCost)
        check("hash_concurrency", \.hashConcurrency)
        check("sqlite_cache_bytes", \.sqliteCacheBytes)
        check("sqlite_mmap_bytes", \.sqliteMmapBytes)
        check("admin_token", \.adminToken)
        check("log_target", \.logTarget)
        check("messaging", \.messaging)
        check("webhooks", \.webhooks)
        check("hook_budget_ms", \.hookBudgetMilliseconds)
        check("live_heartbeat", \.liveHeartbeat)
        check("live_buffer_bytes", \.liveBufferBytes)
        check("live_max_connections", \.liveMaxConnections)
        check("live_max_per_address", \.liveMaxPerAddress)
        check("live_max_per_account", \.liveMaxPerAccount)
        check("trusted_proxies", \.trustedProxies)
        check("forwarded_header", \.forwardedHeader)
        check("tls.hsts", \.tls.hsts)
        check("files_store", \.filesStore)
        check("s3", \.s3)
        check("metrics_access", \.metricsAccess)
        check("server_info", \.serverInfoPublic)
        let indexes = { (c: RoostConfig) in c.collections.mapValues { $0.indexes.map(\.description).sorted() }.filter { !$0.value.isEmpty } }
        if indexes(old) != indexes(new) { names.append("collections.*.indexes") }
        return names
    }
}
