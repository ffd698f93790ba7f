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
///   `POST /admin/webhooks/endpoints/:name/enable` (after a 410 disabled it);
/// - `GET /admin/webhooks/deliveries[?status=pending|delivered|dead]`,
///   `GET /admin/webhooks/deliveries/:id` (with its attempts),
///   `POST /admin/webhooks/deliveries/:id/retry` (re-queues a dead one).
struct WebhookHandlers: Sendable {
    let pools: StorePools
    let collections: CollectionHandlers
    let access: AccessPolicy
    let hooks: HookServices

    func route(_ request: Request, _ out: ResponseWriter) {
        let s = Array(request.segments.dropFirst())
        let method = request.method == .head ? .get : request.method
        switch (s.count, method) {
        case (1, .get) where s[0] == "hooks":
            let listing = BuiltInHooks.listingJSON(hooks.registry)
            readAsAdmin(request, out) { _ in .json(200, listing) }
        case (2, .get) where s == ["webhooks", "endpoints"]: listEndpoints(request, out)
        case (2, .post) where s == ["webhooks", "endpoints"]: addEndpoint(request, out)
        case (3, .delete) where s[0] == "webhooks" && s[1] == "endpoints":
            writeAsAdmin(request, out) { writer in
                guard try writer.deleteWebhookEndpoint(name: s[2]) else { throw HTTPError.notFound("No webhook endpoint \"\(s[2])\".") }
                return .json(200, "{\"count\":1}")
            }
        case (4, .post) where s[0] == "webhooks" && s[1] == "endpoints" && s[3] == "enable":
            writeAsAdmin(request, out) { writer in
                guard try writer.setWebhookEndpointDisabled(name: s[2], reason: nil) else { throw HTTPError.notFound("No webhook endpoint \"\(s[2])\".") }
                return .json(200, "{\"enabled\":true}")
            }
        case (2, .get) where s == ["webhooks", "deliveries"]:
            let status = request.query["status"]
            let limit = min(Int(request.query["limit"] ?? "") ?? 100, 1000)
            if let status, !["pending", "delivered", "dead"].contains(status) {
                return out.send(HTTPError(400, "InvalidQuery", "status must be pending, delivered or dead.").response)
            }
            readAsAdmin(request, out) { reader in
                .json(200, JSONValue.array(try reader.deliveries(status: status, limit: max(limit, 1)).map { .object($0) }).jsonText)
            }
        case (3, .get) where s[0] == "webhooks" && s[1] == "deliveries":
            let rid = Int64(s[2]) ?? -1
            readAsAdmin(request, out) { reader in
                guard let d = try reader.delivery(rid: rid) else { throw HTTPError.notFound("No delivery \(s[2]).") }
                return .json(200, d.jsonText)
            }
        case (4, .post) where s[0] == "webhooks" && s[1] == "deliveries" && s[3] == "retry":
            let rid = Int64(s[2]) ?? -1
            let hooks = self.hooks
            writeAsAdmin(request, out) { writer in
                guard try writer.requeueDelivery(rid: rid) else { throw HTTPError.notFound("No dead delivery \(s[2]).") }
                hooks.outboxDirty.set(true)
                return .json(200, "{\"requeued\":true}")
            }
        default:
            out.send(HTTPError.notFound("No endpoint at \(request.path).").response)
        }
    }

    static func requireAdmin(_ principal: AccessScope.Principal) throws {
        switch principal {
        case .admin: return
        case .anonymous: throw HTTPError(401, "Unauthorized", "The admin API needs the admin token.")
        case .user: throw HTTPError(403, "Forbidden", "The admin API needs the admin token.")
        }
    }

    func readAsAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (DocumentReader) throws -> Response) {
        let access = self.access
        pools.read(request, out) { reader in
            try Self.requireAdmin(try access.caller(request, reader).principal)
            return try body(reader)
        }
    }

    func writeAsAdmin(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable (DocumentWriter) throws -> Response) {
        let access = self.access
        pools.write(request, out, committed: hooks.committed(.init([]))) { writer in
            try Self.requireAdmin(try access.caller(request, writer).principal)
            return try body(writer)
        }
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
                throw HTTPError(400, "InvalidDocument", e.description.replacingOccurrences(of: "webhooks.endpoints[0]", with: "endpoint"))
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
