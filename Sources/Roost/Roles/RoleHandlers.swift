import EventLoop
import HTTP
import JSON
import Store

/// The admin API for roles (admin credential only; `docs/ROLES.md`):
///
/// - `GET /admin/roles`: every role with its member count;
/// - `POST /admin/roles {"name"}`: 201, 409 when it exists, 400 for a bad name;
/// - `DELETE /admin/roles/:name`: the role and its memberships;
/// - `GET /admin/roles/:name/members[?limit=&after=]`: members by user id, paged;
/// - `PUT|DELETE /admin/roles/:name/members/:userID`: adds (idempotent) or removes a member.
///
/// Writes go through the writer queue; each membership change records a
/// `_roles` feed entry in the same transaction.
struct RoleHandlers: Sendable {
    let jobs: CallerJobs
    let collections: CollectionHandlers

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/admin/roles", [.get: { r, out in handlers.list(r, out) }, .post: { r, out in handlers.create(r, out) }]),
            RoostRoute("/admin/roles/:name", [.delete: { r, out in handlers.delete(r.parameter("name"), r, out) }]),
            RoostRoute("/admin/roles/:name/members", [.get: { r, out in handlers.members(r.parameter("name"), r, out) }]),
            RoostRoute("/admin/roles/:name/members/:userID", [
                .put: { r, out in handlers.add(r.parameter("name"), r.parameter("userID"), r, out) },
                .delete: { r, out in handlers.remove(r.parameter("name"), r.parameter("userID"), r, out) },
            ]),
        ]
    }

    func list(_ request: Request, _ out: ResponseWriter) {
        jobs.readAsAdmin(request, out) { reader in
            let roles = try reader.roles().map { role -> JSONValue in
                .object(JSONObject([("name", .string(role.name)), ("members", .int(Int64(role.members))), ("createdAt", .string(role.createdAt))]))
            }
            return .json(200, JSONValue.object(JSONObject([("roles", .array(roles))])).jsonText)
        }
    }

    func create(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        jobs.writeAsAdmin(request, out) { writer in
            let fields = try CollectionHandlers.object(body)
            guard case .string(let text)? = fields["name"] else { throw HTTPError(.invalidDocument, "Send {\"name\": \"…\"}. " + RoleName.rule) }
            if let other = fields.keys.first(where: { $0 != "name" }) {
                throw HTTPError(.invalidDocument, "A role has only a name (found \"\(other)\").")
            }
            let name = try Self.name(text)
            guard try writer.createRole(name) else { throw HTTPError.conflict("A role named \"\(name)\" exists.") }
            return .json(201, JSONValue.object(JSONObject([("name", .string(name.text))])).jsonText)
        }
    }

    func delete(_ text: String, _ request: Request, _ out: ResponseWriter) {
        jobs.writeAsAdmin(request, out) { writer in
            guard try writer.deleteRole(try Self.existing(text)) else { throw Self.noRole(text) }
            return .json(200, "{\"deleted\":true}")
        }
    }

    /// `GET /admin/roles/:name/members[?limit=&after=]`: `{"members": [{"userID", "username"}], "next": <after for the next page> | null}`.
    func members(_ text: String, _ request: Request, _ out: ResponseWriter) {
        jobs.readAsAdmin(request, out) { reader in
            let limit = try PushHandlers.limit(request)
            guard let page = try reader.members(of: try Self.existing(text), after: request.query["after"], limit: limit) else {
                throw Self.noRole(text)
            }
            let members = page.map { m -> JSONValue in
                .object(JSONObject([("userID", .string(m.userID)), ("username", m.username.map { .string($0) } ?? .null)]))
            }
            let next: JSONValue = page.count == limit ? .string(page.last!.userID) : .null
            return .json(200, JSONValue.object(JSONObject([("members", .array(members)), ("next", next)])).jsonText)
        }
    }

    func add(_ text: String, _ userID: String, _ request: Request, _ out: ResponseWriter) {
        jobs.writeAsAdmin(request, out) { writer in
            switch try writer.addMember(try Self.existing(text), userID: userID) {
            case .noSuchRole: throw Self.noRole(text)
            case .noSuchUser: throw HTTPError.notFound("No user with id \(JSONWriter.quoted(userID)).")
            case .added: return .json(200, "{\"member\":true,\"changed\":true}")
            case .unchanged: return .json(200, "{\"member\":true,\"changed\":false}")
            }
        }
    }

    func remove(_ text: String, _ userID: String, _ request: Request, _ out: ResponseWriter) {
        jobs.writeAsAdmin(request, out) { writer in
            guard try writer.removeMember(try Self.existing(text), userID: userID) else {
                throw HTTPError.notFound("\(JSONWriter.quoted(userID)) is not a member of the role \(JSONWriter.quoted(text)).")
            }
            return .json(200, "{\"member\":false,\"changed\":true}")
        }
    }

    /// A new role's name, or 400 with the rule.
    static func name(_ text: String) throws -> RoleName {
        guard let name = RoleName(text) else { throw HTTPError(.invalidDocument, RoleName.rule) }
        return name
    }

    /// The role a path names: a name that is not valid names no role (404).
    static func existing(_ text: String) throws -> RoleName {
        guard let name = RoleName(text) else { throw noRole(text) }
        return name
    }

    static func noRole(_ text: String) -> HTTPError { HTTPError.notFound("No role named \(JSONWriter.quoted(text)).") }
}
