import HTTP
import JSON
import Store

/// What the collections admin API works with: the caller checks, the
/// settings sync, the background index builder and emptier, and how a
/// collection's settings are checked and shown.
struct CollectionAdminJobs: Sendable {
    let callers: CallerJobs
    let sync: CollectionSettingsSync
    let builder: IndexBuilder
    let emptier: CollectionEmptier

    /// Refuses the built-in and reserved names and those the config file manages.
    func checkManageable(_ name: String, _ snapshot: ReloadableSettings.Snapshot) throws {
        guard CollectionName.isWellFormed(name) else { throw HTTPError(.invalidCollectionName, "\"\(name)\" is not a valid collection name.") }
        if BuiltInRules(rawValue: name) != nil {
            throw HTTPError(.reservedCollectionName, "\(name) is Roost's own; its rules are set in the config file (docs/RULES.md).")
        }
        guard !CollectionName.isReserved(name) else {
            throw HTTPError(.reservedCollectionName, "\(name) is a name Roost keeps for its own routes; choose another.")
        }
        if snapshot.managedByConfig.contains(name) {
            throw HTTPError(.managedByConfig, "The config file sets up \(name): change it there (and send SIGHUP), or remove it there to manage it here.")
        }
    }

    /// Checks `fields` as the config file's entry would be; returns them with keys sorted, and what they set.
    func check(_ name: String, _ fields: JSONObject) throws -> (settings: JSONObject, collection: RoostConfig.Collection) {
        let collection: RoostConfig.Collection
        do { collection = try RuntimeCollection.parse(name, fields) } catch let error as RoostConfig.Invalid {
            throw HTTPError(.invalidSettings, error.description)
        }
        var sorted = JSONObject()
        for key in fields.keys.sorted() where fields[key] != .null { sorted[key] = fields[key] }
        return (sorted, collection)
    }

    /// Most documents a collection may hold for a reference field to be added while Roost runs:
    /// its `_refs` rows are built in one writer step (about 200 ms at this size).
    static let referenceBuildMaxRows = 100_000

    /// Refuses a new reference field on a collection too big to index it without holding writes.
    func checkReferenceBuild(_ writer: any DocumentWriting, _ name: String, _ collection: RoostConfig.Collection,
                             _ snapshot: ReloadableSettings.Snapshot) throws {
        let wanted = Set(collection.references.map(\.field))
        let had = Set(snapshot.runtime[name]?.collection.references.map(\.field) ?? [])
        guard !wanted.subtracting(had).isEmpty, try writer.collectionExists(name) else { return }
        let rows = try writer.readerInTransaction().count(name, filter: .object(JSONObject()))
        if rows > Self.referenceBuildMaxRows {
            throw HTTPError(.invalidSettings, "collections.\(name).references: \(name) holds \(rows) documents; a new reference field on more than "
                + "\(Self.referenceBuildMaxRows) is indexed at start-up, not while Roost runs: declare it in the config file and restart.")
        }
    }

    /// A change committed on this node: install it here now, and start what it needs.
    func installed(_ record: CollectionSettingsRecord) {
        sync.installCommitted(record)
    }

    /// Who sets a collection up: the config file, the admin API, or nobody (written to without settings).
    static func manager(_ name: String, _ snapshot: ReloadableSettings.Snapshot) -> String {
        snapshot.managedByConfig.contains(name) ? "config" : snapshot.runtime[name] != nil ? "runtime" : "none"
    }

    /// One line of the listing.
    func summary(_ name: String, _ stored: CollectionDetail?, _ snapshot: ReloadableSettings.Snapshot) -> JSONObject {
        var o = JSONObject()
        o["name"] = .string(name)
        o["count"] = .int(Int64(stored?.count ?? 0))
        o["permission"] = .string(snapshot.permission(of: name).rawValue)
        o["indexes"] = .array(indexes(name, stored).map { .string($0.spec.description) })
        // The access rules as written (docs/RULES.md); an operation without one follows the permission.
        if let rules = snapshot.rules[name] {
            var r = JSONObject()
            for (op, rule) in [("read", rules.read), ("create", rules.create), ("update", rules.update), ("delete", rules.delete)] {
                if let rule { r[op] = rule.source }
            }
            o["rules"] = .object(r)
        }
        o["schema"] = .bool(snapshot.schemas[name] != nil)
        o["managedBy"] = .string(Self.manager(name, snapshot))
        if let version = snapshot.runtime[name]?.version { o["version"] = .int(version) }
        return o
    }

    /// Everything about one collection.
    func detail(_ name: String, _ stored: CollectionDetail?, _ snapshot: ReloadableSettings.Snapshot) -> JSONObject {
        var o = summary(name, stored, snapshot)
        let manager = Self.manager(name, snapshot)
        if manager == "config" {
            o["reason"] = .string("The config file sets this collection up; change it there and send SIGHUP (indexes and references need a restart).")
        }
        if let runtime = snapshot.runtime[name] {
            o["settings"] = .object(runtime.settings)
            o["updatedAt"] = .string(runtime.updatedAt)
        } else if manager == "config", let configured = callers.access.settings.collections[name] {
            o["settings"] = .object(configured.json)
        } else {
            o["settings"] = .object(JSONObject())
        }
        o["indexes"] = .array(indexes(name, stored).map { e in
            var i = JSONObject([("index", .string(e.spec.description)), ("state", .string(e.state.rawValue))])
            if e.state == .building { i["rowsDone"] = .int(e.rowsDone); i["rowsTotal"] = .int(e.rowsTotal) }
            if e.sortDeferred { i["sortOrder"] = .string("built at the next start (SQLite, a big collection); filters use the index now") }
            return .object(i)
        })
        if let p = emptier.progress(of: name) {
            var e = JSONObject([("deleted", .int(Int64(p.deleted))), ("kept", .int(Int64(p.kept))), ("done", .bool(p.done))])
            if let reason = p.reason { e["reason"] = .string(reason) }
            o["emptying"] = .object(e)
        }
        return o
    }

    /// The indexes as the builder last saw them, else as stored.
    private func indexes(_ name: String, _ stored: CollectionDetail?) -> [IndexBuildProgress.Entry] {
        if let progress = builder.state(of: name) { return progress.entries }
        return (stored?.indexes ?? []).map { IndexBuildProgress.Entry(spec: IndexSpec(path: $0.path, kind: IndexSpec.Kind(rawValue: $0.kind) ?? .value), state: .ready) }
    }
}
