import EventLoop
import HTTP
import Hooks
import JSON
import Store
import Webhooks

/// The admin API for hooks and webhooks (admin credential only):
///
/// - `GET /admin/hooks`: every hook in run order;
/// - `GET|POST /admin/webhooks/endpoints`, `DELETE /admin/webhooks/endpoints/:name`,
///   `POST /admin/webhooks/endpoints/:name/enable` (after a 410 disabled it) and `…/disable`;
/// - `GET /admin/webhooks/deliveries[?status=pending|delivered|dead]`,
///   `GET /admin/webhooks/deliveries/:id` (with its attempts),
///   `POST /admin/webhooks/deliveries/:id/retry` (re-queues a dead one).
struct WebhookHandlers: Sendable {
    let jobs: CallerJobs
    let collections: CollectionHandlers
    let hooks: HookServices
    /// The scripts' handlers, listed beside the registry's hooks.
    var scripts: RoostScripts? = nil

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/admin/hooks", [.get: { r, out in handlers.listHooks(r, out) }]),
            RoostRoute("/admin/webhooks/endpoints", [.get: { r, out in handlers.listEndpoints(r, out) },
                                                     .post: { r, out in handlers.addEndpoint(r, out) }]),
            RoostRoute("/admin/webhooks/endpoints/:name", [.delete: { r, out in handlers.deleteEndpoint(r.parameter("name"), r, out) }]),
            RoostRoute("/admin/webhooks/endpoints/:name/enable", [.post: { r, out in handlers.setEnabled(r.parameter("name"), true, r, out) }]),
            RoostRoute("/admin/webhooks/endpoints/:name/disable", [.post: { r, out in handlers.setEnabled(r.parameter("name"), false, r, out) }]),
            RoostRoute("/admin/webhooks/deliveries", [.get: { r, out in handlers.listDeliveries(r, out) }]),
            RoostRoute("/admin/webhooks/deliveries/:id", [.get: { r, out in handlers.delivery(r.parameter("id"), r, out) }]),
            RoostRoute("/admin/webhooks/deliveries/:id/retry", [.post: { r, out in handlers.retryDelivery(r.parameter("id"), r, out) }]),
        ]
    }

    /// The registry's hooks, then the scripts' handlers with file:line, calls, errors and time.
    func listHooks(_ request: Request, _ out: ResponseWriter) {
        let (registry, scripts) = (hooks.registry, self.scripts)
        readAsAdmin(request, out) { _ in
            guard case .array(let builtIn)? = try? JSONParser.parse(BuiltInHooks.listingJSON(registry)) else { return .json(200, "[]") }
            return .json(200, JSONValue.array(builtIn + (scripts?.listing ?? []).map { o in
                var entry = o
                entry["source"] = .string("script")
                return .object(entry)
            }).jsonText)
        }
    }

    func deleteEndpoint(_ name: String, _ request: Request, _ out: ResponseWriter) {
        writeAsAdmin(request, out) { writer in
            guard try writer.deleteWebhookEndpoint(name: name) else { throw HTTPError.notFound("No webhook endpoint \"\(name)\".") }
            return .json(200, "{\"count\":1}")
        }
    }

    /// Enables an endpoint (after a 410 or an admin disabled it) or disables it.
    func setEnabled(_ name: String, _ enabled: Bool, _ request: Request, _ out: ResponseWriter) {
        writeAsAdmin(request, out) { writer in
            guard try writer.setWebhookEndpointDisabled(name: name, reason: enabled ? nil : "disabled by an admin") else {
                throw HTTPError.notFound("No webhook endpoint \"\(name)\".")
            }
            return .json(200, "{\"enabled\":\(enabled)}")
        }
    }

    /// `GET /admin/webhooks/deliveries[?status=&limit=]`.
    func listDeliveries(_ request: Request, _ out: ResponseWriter) {
        let status = request.query["status"]
        let limit = min(Int(request.query["limit"] ?? "") ?? 100, 1000)
        readAsAdmin(request, out) { reader in  // the admin first, then what they ask
            if let status, !["pending", "delivered", "dead"].contains(status) {
                throw HTTPError(.invalidQuery, "status must be pending, delivered or dead.")
            }
            return .json(200, JSONValue.array(try reader.deliveries(status: status, limit: max(limit, 1)).map { .object(DeliveryJSON.object($0)) }).jsonText)
        }
    }

    func delivery(_ id: String, _ request: Request, _ out: ResponseWriter) {
        let rid = Int64(id) ?? -1
        readAsAdmin(request, out) { reader in
            guard let d = try reader.delivery(rid: rid) else { throw HTTPError.notFound("No delivery \(id).") }
            return .json(200, DeliveryJSON.object(d).jsonText)
        }
    }

    func retryDelivery(_ id: String, _ request: Request, _ out: ResponseWriter) {
        let rid = Int64(id) ?? -1
        let hooks = self.hooks
        writeAsAdmin(request, out) { writer in
            guard try writer.requeueDelivery(rid: rid) else { throw HTTPError.notFound("No dead delivery \(id).") }
            hooks.outboxDirty.set(true)
            return .json(200, "{\"requeued\":true}")
        }
    }

    func readAsAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentReading) throws -> Response) {
        jobs.readAsAdmin(request, out) { try body($0) }
    }

    /// The caller is checked on a reader first: an anonymous flood never takes the writer.
    func writeAsAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (any DocumentWriting) throws -> Response) {
        jobs.writeAsAdmin(request, out, committed: hooks.committed(.init([])), body)
    }

    func listEndpoints(_ request: Request, _ out: ResponseWriter) {
        readAsAdmin(request, out) { reader in
            .json(200, JSONValue.array(try reader.webhookEndpoints().map { .object(Self.endpoint($0, showSecret: false)) }).jsonText)
        }
    }

    func addEndpoint(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        writeAsAdmin(request, out) { writer in
            var fields = Self.plain(.object(try CollectionHandlers.object(body))) as? [String: Any] ?? [:]
            if fields["secret"] == nil { fields["secret"] = WebhookSigner.generateSecret() }
            let record: WebhookEndpointRecord
            do { record = try RoostConfig.endpoint(fields, index: 0, source: "admin") } catch let e as RoostConfig.Invalid {
                throw HTTPError(.invalidDocument, e.description.replacingOccurrences(of: "webhooks.endpoints[0]", with: "endpoint"))
            }
            if try writer.webhookEndpoints().contains(where: { $0.name == record.name }) {
                throw HTTPError.conflict("A webhook endpoint named \"\(record.name)\" exists; delete it first.")
            }
            try writer.saveWebhookEndpoint(record, keepDisabled: false)
            return .json(201, Self.endpoint(record, showSecret: true).jsonText)
        }
    }

    /// An endpoint as the admin API shows it; the secret only when just created.
    static func endpoint(_ e: WebhookEndpointRecord, showSecret: Bool) -> JSONObject {
        var o = JSONObject()
        o["name"] = .string(e.name)
        o["url"] = .string(e.url)
        o["secret"] = .string(showSecret ? e.secret : "whsec_…")
        o["events"] = .array(e.events.map { .string($0) })
        o["format"] = .string(e.format)
        o["source"] = .string(e.source)
        o["enabled"] = .bool(e.isEnabled)
        o["disabledAt"] = e.disabledAt.map { .string($0) } ?? .null
        o["disabledReason"] = e.disabledReason.map { .string($0) } ?? .null
        return o
    }

    /// JSON as the config file's plain values, so one validator serves both.
    static func plain(_ value: JSONValue) -> Any {
        switch value {
        case .null: return NSNullLite()
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .array(let a): return a.map(plain)
        case .object(let o): return Dictionary(o.map { ($0.key, plain($0.value)) }, uniquingKeysWith: { _, last in last })
        }
    }
}

/// Stands for JSON null among plain values.
struct NSNullLite: CustomStringConvertible {
    var description: String { "null" }
}
