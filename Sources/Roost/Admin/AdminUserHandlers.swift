import Auth
import EventLoop
import HTTP
import JSON
import Store

/// The admin's user management behind the console's Users page (admin
/// credential only; any other token is 403, none or a wrong one 401):
///
/// - `POST /admin/users {username?, email?, password, …profile}`: 201 with
///   the new user's record. The sign-up's checks (username and password
///   rules, a username or an email, both unique: 409 `Conflict`) but no
///   sign-up throttle, no session and no verification mail: an address the
///   admin gives is marked verified.
/// - `PUT /admin/users/:id/password {password}`: 204; the new password is
///   hashed on the hash pool and every session of the user ends.
/// - `GET /admin/users/:id/roles`: `{"roles": [...]}`, the user's roles.
/// - `GET /admin/users/:id/account`: how the user signs in, as `GET /auth/account`
///   shows it to them (password, email and verification, two-factor, guest,
///   linked providers); the console's Users page shows it.
///
/// Profile fields change through `PATCH /users/:id` with the admin token.
struct AdminUserHandlers: Sendable {
    let accounts: AccountHandlers

    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/admin/users", [.post: { r, out in handlers.create(r, out) }]),
            RoostRoute("/admin/users/:id/password", [.put: { r, out in handlers.setPassword(r.parameter("id"), r, out) }]),
            RoostRoute("/admin/users/:id/roles", [.get: { r, out in handlers.roles(r.parameter("id"), r, out) }]),
            RoostRoute("/admin/users/:id/account", [.get: { r, out in handlers.account(r.parameter("id"), r, out) }]),
        ]
    }

    static let users = AccessPolicy.usersCollection

    /// Checks the body and the names on a reader (after the admin check),
    /// hashes on the hash pool's sign-up lane, writes in the group commit.
    func create(_ request: Request, _ out: ResponseWriter) {
        guard let body = accounts.collections.checkBody(request, out) else { return }
        let (hasher, pools, hooks) = (accounts.hasher, accounts.pools, accounts.collections.hooks)
        accounts.jobs.readAsAdmin(request, out) { reader in
            var profile = try CollectionHandlers.object(body)
            let names = try AccountHandlers.signUpNames(profile, requires: .either)
            let password = try AccountHandlers.password(profile["password"], field: "password")
            if let username = names.username, try reader.credentials(username: username) != nil { throw StoreError.usernameTaken }
            if let email = names.email, try reader.credentials(email: email) != nil { throw StoreError.emailTaken }
            profile["password"] = nil
            profile["oldPassword"] = nil
            profile["username"] = names.username.map { .string($0) }
            profile["email"] = names.email.map { .string($0) }
            profile["emailVerified"] = names.email == nil ? nil : .bool(true)
            let fields = profile
            pools.hashing(request, out, lane: .signUp) {
                guard let hash = hasher.hash(password) else { throw Overload.hashes.error }
                Self.store(request, out, pools: pools, hooks: hooks, names: names, hash: hash, fields: fields)
                return nil
            }
            return nil
        }
    }

    /// The write of `create`: credentials, then the record through the hooks
    /// (users.* hooks and webhooks see it as they see a sign-up).
    private static func store(_ request: Request, _ out: ResponseWriter, pools: StorePools, hooks: HookServices,
                              names: AccountHandlers.SignUpNames, hash: String, fields: JSONObject) {
        let pending = HookServices.Pending([])
        pools.write(request, out, committed: { hooks.committed(pending)() }) { writer in
            let id = writer.newID()
            // The writer's unique indexes decide a race for a name (409).
            try writer.addCredentials(userID: id, username: names.username ?? "~" + id, email: names.email, passwordHash: hash)
            if let email = names.email { try writer.setEmail(userID: id, email: email, verified: true) }
            var document = fields
            document["_id"] = .string(id)
            let scope = AccessScope(principal: .user(id), level: .shared)
            let text = try hooks.run(.beforeCreate, users, id: id, entity: document, requestID: request.requestID,
                                     scope: scope, writer: writer, pending: pending) { document in
                try writer.insert(into: users, document, scope: scope)
            }
            return .json(201, text)
        }
    }

    /// The new password is checked and the user found on a reader, hashed on
    /// the hash pool, and stored with every session ended in one write.
    func setPassword(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard let body = accounts.collections.checkBody(request, out) else { return }
        let (hasher, pools) = (accounts.hasher, accounts.pools)
        accounts.jobs.readAsAdmin(request, out) { reader in
            let fields = try CollectionHandlers.object(body)
            if let other = fields.keys.first(where: { $0 != "password" }) {
                throw HTTPError(.invalidDocument, "Send {\"password\": \"…\"} alone (found \"\(other)\").")
            }
            let password = try AccountHandlers.password(fields["password"], field: "password")
            try Self.requirePasswordAccount(try reader.credentials(userID: id), id)
            pools.hashing(request, out, lane: .credentials) {
                guard let hash = hasher.hash(password) else { throw Overload.hashes.error }
                pools.write(request, out, committed: { pools.sessionsEnded() }) { writer in
                    try Self.requirePasswordAccount(try writer.credentials(userID: id), id) // deleted meanwhile?
                    try writer.setPassword(userID: id, passwordHash: hash)
                    try writer.deleteSessions(userID: id, keeping: nil)
                    return Response(status: 204)
                }
                return nil
            }
            return nil
        }
    }

    /// 404 for no such user; 409 for a guest, whose account has no name to sign in with.
    private static func requirePasswordAccount(_ account: CredentialRecord?, _ id: String) throws {
        guard let account else { throw HTTPError.notFound("No user with _id \"\(id)\".") }
        if account.anonymousSince != nil {
            throw HTTPError.conflict("User \(id) is a guest (anonymous): a guest has no password until it upgrades (POST /auth/anonymous/upgrade).")
        }
    }

    func roles(_ id: String, _ request: Request, _ out: ResponseWriter) {
        accounts.jobs.readAsAdmin(request, out) { reader in
            guard try reader.credentials(userID: id) != nil else { throw HTTPError.notFound("No user with _id \"\(id)\".") }
            let roles = try reader.roles(userID: id).map { JSONValue.string($0) }
            return .json(200, JSONValue.object(JSONObject([("roles", .array(roles))])).jsonText)
        }
    }

    func account(_ id: String, _ request: Request, _ out: ResponseWriter) {
        accounts.jobs.readAsAdmin(request, out) { reader in
            guard let body = try AccountHandlers.security(reader, userID: id) else { throw HTTPError.notFound("No user with _id \"\(id)\".") }
            return .json(200, body)
        }
    }
}
