import EventLoop
import Foundation
import HTTP
import JSON
import Jobs
import Schema
import Store

/// The admin API for collections (admin token only; docs/COLLECTIONS.md):
///
/// - `GET /admin/collections`: every collection: count, level, indexes,
///   rules, who manages its settings (`config`, `runtime` or `none`);
/// - `POST /admin/collections {"name", permission?, indexes?, references?, rules?, schema?}`:
///   sets one up (201); 409 `ManagedByConfig` for one the config file names, 409 when set up already;
/// - `GET /admin/collections/:name`: its settings, version (the `ETag`), index builds and emptying;
/// - `PATCH /admin/collections/:name {settings…}`: changes the given settings (null removes one),
///   `If-Match: <version>` to refuse a change made meanwhile (412);
/// - `DELETE /admin/collections/:name?confirm=<name>`: drops it: its settings go and its documents are deleted (202);
/// - `POST /admin/collections/:name/empty?confirm=<name>`: deletes every document (202), in the background;
/// - `GET /admin/collections/:name/violations[?after=<id>]`: documents stored before the schema that fail it.
///
/// `?dry_run=true` on POST and PATCH checks without saving. Settings are
/// checked by the config file's own parser before anything changes.
struct CollectionAdminHandlers: Sendable {
    let jobs: CollectionAdminJobs
    let maxBodyBytes: Int

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/admin/collections", [.get: { r, out in handlers.list(r, out) }, .post: { r, out in handlers.create(r, out) }]),
            RoostRoute("/admin/collections/:name", [.get: { r, out in handlers.detail(r.parameter("name"), r, out) },
                                                    .patch: { r, out in handlers.change(r.parameter("name"), r, out) },
                                                    .delete: { r, out in handlers.drop(r.parameter("name"), r, out) }]),
            RoostRoute("/admin/collections/:name/empty", [.post: { r, out in handlers.empty(r.parameter("name"), r, out) }]),
            RoostRoute("/admin/collections/:name/violations", [.get: { r, out in handlers.violations(r.parameter("name"), r, out) }]),
        ]
    }

    private var callers: CallerJobs { jobs.callers }
    private var settings: ReloadableSettings { jobs.callers.access.settings }

    func list(_ request: Request, _ out: ResponseWriter) {
        let (jobs, settings) = (self.jobs, self.settings)
        callers.readAsAdmin(request, out) { reader in
            let stored = Dictionary(try reader.collectionDetails().map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            let snapshot = settings.snapshot
            // Declared or set up but never written: listed with no rows, so the console opens it.
            // A dropped (or emptied) collection nobody sets up is gone once it has no documents left.
            let names = Set(stored.keys).union(snapshot.declared).filter { name in
                BuiltInRules(rawValue: name) == nil && (snapshot.declared.contains(name) || stored[name]?.count ?? 0 > 0)
            }
            return .json(200, JSONValue.array(names.sorted().map { .object(jobs.summary($0, stored[$0], snapshot)) }).jsonText)
        }
    }

    func detail(_ name: String, _ request: Request, _ out: ResponseWriter) {
        let (jobs, settings) = (self.jobs, self.settings)
        callers.readAsAdmin(request, out) { reader in
            let snapshot = settings.snapshot
            let stored = try reader.collectionDetails(named: name).first
            guard (stored?.count ?? 0) > 0 || snapshot.declared.contains(name), BuiltInRules(rawValue: name) == nil else {
                throw HTTPError.notFound("No collection \(name).")
            }
            var response = Response.json(200, JSONValue.object(jobs.detail(name, stored, snapshot)).jsonText)
            if let version = snapshot.runtime[name]?.version { response.headers.add("ETag", "\"\(version)\"") }
            return response
        }
    }

    func create(_ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out) else { return }
        let jobs = self.jobs
        save(request, out, status: 201) { snapshot in
            var fields = try CollectionHandlers.object(body)
            guard case .string(let name)? = fields["name"] else {
                throw HTTPError(.invalidSettings, "Send {\"name\": \"…\"} and the collection's settings (\(RuntimeCollection.keys.joined(separator: ", "))).")
            }
            fields["name"] = nil
            try jobs.checkManageable(name, snapshot)
            if snapshot.runtime[name] != nil { throw HTTPError.conflict("The collection \(name) is set up already: PATCH /admin/collections/\(name) changes it.") }
            return (name, fields, 0)
        }
    }

    func change(_ name: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = checkBody(request, out) else { return }
        let jobs = self.jobs
        let ifMatch = request.headers["If-Match"].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" W/")) }
        save(request, out, status: 200) { snapshot in
            let patch = try CollectionHandlers.object(body)
            try jobs.checkManageable(name, snapshot)
            guard let current = snapshot.runtime[name] else {
                throw HTTPError.notFound("No collection \(name) set up at run time: POST /admin/collections sets one up.")
            }
            if let ifMatch, Int64(ifMatch) != current.version {
                throw HTTPError(.preconditionFailed, "The settings of \(name) are at version \(current.version), not \(ifMatch): read them again.")
            }
            var settings = current.settings
            for (key, value) in patch { settings[key] = value == .null ? nil : value }
            return (name, settings, current.version)
        }
    }

    /// Checks what `prepare` makes of the request and, unless `dry_run`, stores it.
    private func save(_ request: Request, _ out: ResponseWriter, status: Int,
                      _ prepare: @escaping @Sendable (ReloadableSettings.Snapshot) throws -> (String, JSONObject, Int64)) {
        let (jobs, settings) = (self.jobs, self.settings)
        if request.query["dry_run"] == "true" {
            callers.readAsAdmin(request, out) { _ in
                let (name, fields, _) = try prepare(settings.snapshot)
                let checked = try jobs.check(name, fields).settings
                return .json(200, JSONValue.object(JSONObject([("name", .string(name)), ("settings", .object(checked)), ("valid", .bool(true))])).jsonText)
            }
            return
        }
        let saved = LockedBox<CollectionSettingsRecord?>(nil)
        callers.writeAsAdmin(request, out, committed: { if let record = saved.get() { jobs.installed(record) } }) { writer in
            let snapshot = settings.snapshot
            let (name, fields, version) = try prepare(snapshot)
            let (checked, collection) = try jobs.check(name, fields)
            try jobs.checkReferenceBuild(writer, name, collection, snapshot)
            let record = try writer.saveCollectionSettings(name, settings: JSONValue.object(checked).jsonText, ifVersion: version)
            saved.set(record)
            var body = JSONObject([("name", .string(name)), ("managedBy", .string("runtime")), ("version", .int(record.version)),
                                   ("settings", .object(checked))])
            body["updatedAt"] = .string(record.updatedAt)
            var response = Response.json(status, JSONValue.object(body).jsonText)
            response.headers.add("ETag", "\"\(record.version)\"")
            return response
        }
    }

    func drop(_ name: String, _ request: Request, _ out: ResponseWriter) {
        let (jobs, settings) = (self.jobs, self.settings)
        let confirmation = request.query["confirm"]
        let saved = LockedBox<CollectionSettingsRecord?>(nil)
        callers.writeAsAdmin(request, out, committed: {
            if let record = saved.get() { jobs.installed(record) }
            jobs.emptier.start(name)
        }) { writer in
            let snapshot = settings.snapshot
            try Self.checkConfirmed(name, confirmation)  // the admin first (writeAsAdmin), then what they ask
            try jobs.checkManageable(name, snapshot)
            guard try snapshot.runtime[name] != nil || writer.collectionExists(name) else { throw HTTPError.notFound("No collection \(name).") }
            if snapshot.runtime[name] != nil {
                saved.set(try writer.saveCollectionSettings(name, settings: nil, ifVersion: nil))
            }
            return .json(202, "{\"name\":\(JSONWriter.quoted(name)),\"dropped\":true,\"emptying\":true}")
        }
    }

    func empty(_ name: String, _ request: Request, _ out: ResponseWriter) {
        let (jobs, settings) = (self.jobs, self.settings)
        let confirmation = request.query["confirm"]
        callers.readAsAdmin(request, out) { reader in
            try Self.checkConfirmed(name, confirmation)
            let snapshot = settings.snapshot
            guard try snapshot.declared.contains(name) || !reader.collectionDetails(named: name).isEmpty,
                  BuiltInRules(rawValue: name) == nil else {
                throw HTTPError.notFound("No collection \(name).")
            }
            guard jobs.emptier.start(name) else { throw HTTPError.conflict("The collection \(name) is being emptied already.") }
            return .json(202, "{\"name\":\(JSONWriter.quoted(name)),\"emptying\":true}")
        }
    }

    func violations(_ name: String, _ request: Request, _ out: ResponseWriter) {
        let settings = self.settings
        let after = request.query["after"]
        callers.readAsAdmin(request, out) { reader in
            guard let schema = settings.schema(of: name) else {
                throw HTTPError.notFound("The collection \(name) has no schema.")
            }
            let report = try SchemaReport.check(reader, name, schema.compiled, after: after, scan: SchemaReport.pageRows)
            return .json(200, JSONValue.object(report.json).jsonText)
        }
    }

    /// Emptying and dropping delete everything: `?confirm=` must repeat the name.
    private static func checkConfirmed(_ name: String, _ confirmation: String?) throws {
        guard confirmation == name else {
            throw HTTPError(.badRequest, "This deletes every document of \(name): repeat its name as ?confirm=\(name).")
        }
    }

    private func checkBody(_ request: Request, _ out: ResponseWriter) -> [UInt8]? {
        CollectionHandlers.checkBody(request, out, maxBodyBytes: maxBodyBytes)
    }
}
