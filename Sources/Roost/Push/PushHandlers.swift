import EventLoop
import HTTP
import JSON
import Store

/// Push devices: `POST /push/devices` registers the caller's device token,
/// `DELETE /push/devices/:token` removes it, `GET /push/devices` lists the
/// caller's. A token belongs to one user at a time: registering it moves it.
struct PushHandlers: Sendable {
    let jobs: CallerJobs
    let collections: CollectionHandlers

    static let platforms: Set<String> = ["ios", "android", "web"]
    static let environments: Set<String> = ["sandbox", "production"]

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/push/devices", [.get: { r, out in handlers.list(r, out) }, .post: { r, out in handlers.register(r, out) }]),
            RoostRoute("/push/devices/:token", [.delete: { r, out in handlers.unregister(r.parameter("token"), r, out) }]),
            RoostRoute("/admin/push/devices", [.get: { r, out in handlers.adminDevices(r, out) }]),
            RoostRoute("/admin/push/deliveries", [.get: { r, out in handlers.adminDeliveries(r, out) }]),
            RoostRoute("/admin/push/deliveries/:id", [.get: { r, out in handlers.adminDelivery(r.parameter("id"), r, out) }]),
            RoostRoute("/push/*", anyMethod: Router.noEndpoint),
        ]
    }

    static func user(_ principal: AccessScope.Principal) throws -> String {
        switch principal {
        case .user(let id): return id
        case .anonymous: throw HTTPError(.unauthorized, "Sign in to manage your push devices.")
        case .admin: throw HTTPError(.forbidden, "Devices belong to users; the admin credential has none.")
        }
    }

    func register(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        // Who asks and what they send are settled on a reader: a refused or
        // malformed request never takes a writer slot.
        jobs.write(request, out, prepare: { caller in
            let user = try Self.user(caller.principal)
            let fields = try CollectionHandlers.object(body)
            guard case .string(let platform)? = fields["platform"], Self.platforms.contains(platform) else {
                throw HTTPError(.invalidDocument, "platform must be ios, android or web.")
            }
            guard case .string(let token)? = fields["token"], (1...4096).contains(token.utf8.count), !token.contains("/") else {
                throw HTTPError(.invalidDocument, "token must be a string of 1 to 4096 bytes without '/'.")
            }
            // APNs device tokens are bytes the app turns into hex; anything else would only ever be refused by Apple.
            if platform == "ios", !Self.isHex(token) {
                throw HTTPError(.invalidDocument, "An ios token must be the APNs device token in hex: an even number of digits 0-9 and a-f.")
            }
            // The APNs environment the app was built for (a debug build's tokens are sandbox tokens).
            var environment: String?
            switch fields["environment"] {
            case nil, .null?: environment = nil
            case .string(let e)? where platform == "ios" && Self.environments.contains(e): environment = e
            default: throw HTTPError(.invalidDocument, "environment must be sandbox or production, and only for ios.")
            }
            // Whether the app wants silent pushes that tell it to sync (collections with push_sync: true).
            var sync = false
            switch fields["sync"] {
            case nil, .null?: sync = false
            case .bool(let b)?: sync = b
            default: throw HTTPError(.invalidDocument, "sync must be true or false.")
            }
            return (user, platform, token, environment, sync)
        }) { writer, prepared in
            let (user, platform, token, environment, sync) = prepared
            let changed = try writer.registerDevice(token: token, userID: user, platform: platform, environment: environment, sync: sync)
            return .json(changed ? 201 : 200, Self.deviceJSON(PushDevice(token: token, userID: user, platform: platform)))
        }
    }

    func unregister(_ token: String, _ request: Request, _ out: ResponseWriter) {
        jobs.write(request, out) { writer, caller in
            let principal = caller.principal
            let owner: String? = principal == .admin ? nil : try Self.user(principal)
            guard try writer.unregisterDevice(token: token, userID: owner) else {
                throw HTTPError.notFound("You have no device with that token.")
            }
            return .json(200, "{\"count\":1}")
        }
    }

    func list(_ request: Request, _ out: ResponseWriter) {
        jobs.read(request, out) { reader, caller in
            let user = try Self.user(caller.principal)
            return .json(200, JSONValue.array(try reader.devices(userIDs: [user]).map { .object(Self.device($0)) }).jsonText)
        }
    }

    /// Every device with its deliveries and last error (the console's push page), admin only.
    func adminDevices(_ request: Request, _ out: ResponseWriter) {
        jobs.readAsAdmin(request, out) { reader in  // the admin first, then what they ask
            let limit = try Self.limit(request)
            return .json(200, JSONValue.array(try reader.pushDeviceReports(limit: limit).map { .object(PushDeliveryJSON.report($0)) }).jsonText)
        }
    }

    /// Direct pushes, newest first (`?status=pending|delivered|dead|dropped`), admin only.
    func adminDeliveries(_ request: Request, _ out: ResponseWriter) {
        let status = request.query["status"]
        jobs.readAsAdmin(request, out) { reader in  // the admin first, then what they ask
            let limit = try Self.limit(request)
            if let status, !["pending", "delivered", "dead", "dropped"].contains(status) {
                throw HTTPError(.invalidQuery, "status must be pending, delivered, dead or dropped.")
            }
            return .json(200, JSONValue.array(try reader.pushDeliveries(status: status, limit: limit).map { .object(PushDeliveryJSON.object($0)) }).jsonText)
        }
    }

    /// One push with every attempt (when, the provider's status, the error), admin only.
    func adminDelivery(_ id: String, _ request: Request, _ out: ResponseWriter) {
        let rid = Int64(id) ?? -1
        jobs.readAsAdmin(request, out) { reader in
            guard let d = try reader.pushDelivery(rid: rid) else { throw HTTPError.notFound("No push \(id).") }
            return .json(200, PushDeliveryJSON.object(d).jsonText)
        }
    }

    /// `limit`: 1 to 1000, 100 when absent; anything else is 400, never quietly clamped.
    static func limit(_ request: Request) throws -> Int {
        guard let text = request.query["limit"] else { return 100 }
        guard let n = Int(text), (1...1000).contains(n) else { throw HTTPError(.invalidQuery, "limit must be a whole number from 1 to 1000.") }
        return n
    }

    /// Whether `token` is an even number of hex digits (either case), as APNs device tokens are written.
    static func isHex(_ token: String) -> Bool {
        token.utf8.count % 2 == 0 && token.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
    }

    static func device(_ d: PushDevice) -> JSONObject {
        var o = JSONObject()
        o["token"] = .string(d.token)
        o["platform"] = .string(d.platform)
        o["userId"] = .string(d.userID)
        return o
    }

    static func deviceJSON(_ d: PushDevice) -> String { device(d).jsonText }
}
