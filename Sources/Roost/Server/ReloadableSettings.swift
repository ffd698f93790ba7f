import Foundation
import Jobs
import Store

/// The settings a SIGHUP or the admin API can change without a restart,
/// shared by every thread: collection permissions, rules and schemas
/// (the config's, and those of collections set up at run time, which the
/// config's override), private user fields and the rate limits.
/// Every thread reads its own copy of the snapshot, taken again after a change (`ThreadCachedValue`).
final class ReloadableSettings: @unchecked Sendable {
    struct Snapshot: Sendable {
        var permissions: [String: RoostConfig.Permission]
        /// Configured access rules by collection (docs/RULES.md).
        var rules: [String: CollectionRules]
        /// Configured JSON Schemas by collection (docs/SCHEMAS.md).
        var schemas: [String: CollectionSchema]
        /// Declared geo-indexed paths by collection: a write there must hold a point
        /// (`GeoPointCheck`) from the moment the index is declared, before it is built.
        var geoPaths: [String: [String]]
        var defaultPermission: RoostConfig.Permission
        var privateUserFields: [String]
        /// Collections only the server (its hooks) and admins write: the messaging threads.
        var serverWritten: Set<String> = []
        /// Collections the config names (messaging's included).
        var declared: Set<String> = []
        /// `auto_create_collections`.
        var autoCreate = true
        /// Collections whose settings the config file holds (the admin API may not change them).
        var managedByConfig: Set<String> = []
        /// Collections set up at run time, by name.
        var runtime: [String: RuntimeCollection] = [:]
        /// Counts the snapshots installed: what was derived from one (the served openapi.yaml) is
        /// current while this is unchanged.
        var generation = 0

        init(_ config: RoostConfig, runtime: [String: RuntimeCollection] = [:]) {
            // The config's entry wins over a stored one of the same name (set up before the config named it).
            let collections = runtime.mapValues(\.collection).merging(config.collections) { _, configured in configured }
            self.runtime = runtime.filter { config.collections[$0.key] == nil }
            permissions = collections.compactMapValues(\.permission)
            rules = collections.compactMapValues(\.rules)
            schemas = collections.compactMapValues(\.schema)
            geoPaths = collections.compactMapValues { collection in
                let paths = collection.indexes.filter { $0.kind == .geo }.map(\.path).sorted()
                return paths.isEmpty ? nil : paths
            }
            // Threads and messages are private unless the config says otherwise:
            // only the participants (their ACL) may read them.
            if config.messaging.enabled {
                for name in [config.messaging.threads, config.messaging.messages] where permissions[name] == nil {
                    permissions[name] = .private
                }
                serverWritten.insert(config.messaging.threads)
            }
            defaultPermission = config.defaultPermission
            declared = Set(config.collections.keys)
            if config.messaging.enabled { declared.formUnion([config.messaging.threads, config.messaging.messages]) }
            managedByConfig = declared
            declared.formUnion(self.runtime.keys)
            autoCreate = config.autoCreateCollections
            privateUserFields = config.privateUserFields
        }

        func permission(of collection: String) -> RoostConfig.Permission {
            permissions[collection] ?? defaultPermission
        }
    }

    /// The snapshot, read by every request without a lock (`ThreadCachedValue`).
    private let current: ThreadCachedValue<Snapshot>
    /// Guards `config` and `rateLimits`, which only a reload reads and writes.
    private let lock = NSLock()
    private var config: RoostConfig
    private var rateLimits: RoostConfig.RateLimits
    /// The callers' budgets (`rate_limits`), which keep their own locks.
    let limits: RequestLimits

    init(_ config: RoostConfig) {
        current = ThreadCachedValue(Snapshot(config))
        self.config = config
        rateLimits = config.rateLimits
        limits = RequestLimits(config.rateLimits)
    }

    /// Every collection's settings, the config's over those set up at run time.
    var collections: [String: RoostConfig.Collection] {
        lock.lock(); defer { lock.unlock() }
        return current.read { $0.runtime }.mapValues(\.collection).merging(config.collections) { _, configured in configured }
    }

    var snapshot: Snapshot { current.read { $0 } }

    // One entry, without copying the whole snapshot: these run for every request and write.
    func permission(of collection: String) -> RoostConfig.Permission { current.read { $0.permission(of: collection) } }

    func rules(of collection: String) -> CollectionRules? { current.read { $0.rules[collection] } }

    func schema(of collection: String) -> CollectionSchema? { current.read { $0.schemas[collection] } }

    /// `collection`'s declared geo-indexed paths (none: `[]`).
    func geoPaths(of collection: String) -> [String] { current.read { $0.geoPaths[collection] ?? [] } }

    var privateUserFields: [String] { current.read { $0.privateUserFields } }

    func isServerWritten(_ collection: String) -> Bool { current.read { $0.serverWritten.contains(collection) } }

    /// Whether a first write may create `collection` (declared, or `auto_create_collections`).
    func mayCreate(_ collection: String) -> Bool {
        current.read { $0.autoCreate || $0.declared.contains(collection) }
    }

    /// Installs `config`'s reloadable settings; returns what changed, one
    /// human-readable line per change.
    @discardableResult
    func apply(_ config: RoostConfig) -> [String] {
        lock.lock()
        let (old, new) = current.update { snapshot -> (Snapshot, Snapshot) in
            var new = Snapshot(config, runtime: snapshot.runtime)
            new.generation = snapshot.generation + 1
            defer { snapshot = new }
            return (snapshot, new)
        }
        let oldLimits = rateLimits
        self.config = config
        rateLimits = config.rateLimits
        limits.limiter.configure(config.rateLimits)
        lock.unlock()
        return config.rateLimits.changes(from: oldLimits) + Self.changes(from: old, to: new)  // default_permission is the settings table's (ConfigReloader)
    }

    /// Installs the collections set up at run time (`CollectionSettingsSync`); returns what changed.
    @discardableResult
    func apply(runtime: [String: RuntimeCollection]) -> [String] {
        lock.lock()
        let config = self.config
        let (old, new) = current.update { snapshot -> (Snapshot, Snapshot) in
            var new = Snapshot(config, runtime: runtime)
            new.generation = snapshot.generation + 1
            defer { snapshot = new }
            return (snapshot, new)
        }
        lock.unlock()
        return Self.changes(from: old, to: new)
    }

    /// One human-readable line per collection setting that differs.
    private static func changes(from old: Snapshot, to new: Snapshot) -> [String] {
        var changes: [String] = []
        for name in Set(old.permissions.keys).union(new.permissions.keys).sorted()
        where old.permission(of: name) != new.permission(of: name) {
            changes.append("collections.\(name).permission: \(old.permission(of: name).rawValue) → \(new.permission(of: name).rawValue)")
        }
        for name in Set(old.rules.keys).union(new.rules.keys).sorted()
        where old.rules[name]?.fingerprint != new.rules[name]?.fingerprint {
            changes.append("collections.\(name).rules: \(new.rules[name] == nil ? "removed" : "changed")")
        }
        for name in Set(old.schemas.keys).union(new.schemas.keys).sorted()
        where old.schemas[name]?.source != new.schemas[name]?.source {
            changes.append("collections.\(name).schema: \(new.schemas[name] == nil ? "removed" : "changed")")
        }
        if old.privateUserFields != new.privateUserFields {
            changes.append("users.private_fields: \(old.privateUserFields) → \(new.privateUserFields)")
        }
        return changes
    }

    /// Settings that differ between `old` and `new` but only take effect on
    /// restart: every scalar setting the table (`RoostConfig.settings`) marks
    /// so, and the mappings no reload applies.
    static func needsRestart(_ old: RoostConfig, _ new: RoostConfig) -> [String] {
        var names = RoostConfig.changedSettings(old, new).filter { $0.onReload == .restart }.map(\.key)
        func check<T: Equatable>(_ name: String, _ path: KeyPath<RoostConfig, T>) {
            if old[keyPath: path] != new[keyPath: path] { names.append(name) }
        }
        check("messaging", \.messaging)
        check("webhooks", \.webhooks)
        check("s3", \.s3)
        check("backups", \.backups)
        check("push", \.push)
        let pushSync = { (c: RoostConfig) in c.collections.filter { $0.value.pushSync }.keys.sorted() }
        if pushSync(old) != pushSync(new) { names.append("collections.*.push_sync") }
        let indexes = { (c: RoostConfig) in c.collections.mapValues { $0.indexes.map(\.description).sorted() }.filter { !$0.value.isEmpty } }
        if indexes(old) != indexes(new) { names.append("collections.*.indexes") }
        let references = { (c: RoostConfig) in c.collections.mapValues { "\($0.references)" }.filter { $0.value != "[]" } }
        if references(old) != references(new) { names.append("collections.*.references") }
        return names
    }
}
