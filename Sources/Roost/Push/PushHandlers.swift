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

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/push/devices", [.get: { r, out in handlers.list(r, out) }, .post: { r, out in handlers.register(r, out) }]),
            RoostRoute("/push/devices/:token", [.delete: { r, out in handlers.unregister(r.parameter("token"), r, out) }]),
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
            return (user, platform, token)
        }) { writer, prepared in
            let (user, platform, token) = prepared
            let changed = try writer.registerDevice(token: token, userID: user, platform: platform)
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

    static func device(_ d: PushDevice) -> JSONObject {
        var o = JSONObject()
        o["token"] = .string(d.token)
        o["platform"] = .string(d.platform)
        o["userId"] = .string(d.userID)
        return o
    }

    static func deviceJSON(_ d: PushDevice) -> String { device(d).jsonText }
}
