import Auth
import EventLoop
import HTTP
import JSON
import Store

extension AccountHandlers {
    /// `PUT`/`PATCH /users/:id`: self or admin. A new `password` needs the
    /// `oldPassword` (admins excepted) and signs out the user's other sessions.
    func update(_ id: String, _ request: Request, _ out: ResponseWriter, merge: Bool) {
        guard let body = collections.checkBody(request, out, extraTypes: merge ? ["application/merge-patch+json"] : []) else { return }
        let (hasher, access, pools) = (self.hasher, self.access, self.pools)
        // Who asks and what they send are settled on a reader, before the body
        // reaches the writer or a hash thread (and never on the loop).
        pools.readStep(request, out) { reader in
            let caller = try access.caller(request, reader)
            try Self.checkSelfOrAdmin(caller.principal, id: id)
            let fields = try CollectionHandlers.object(body)
            guard fields["password"] != nil else {
                pools.write(request, out) { writer in
                    try Self.applyUpdate(writer, id: id, caller: caller, fields: fields, newHash: nil, merge: merge)
                }
                return nil
            }
            pools.hashing(request, out) { reader in
                var fields = fields
                let newPassword = try Self.password(fields["password"], field: "password")
                if caller.principal != .admin {
                    guard case .string(let old)? = fields["oldPassword"], let stored = try reader.credentials(userID: id),
                          hasher.verify(old, against: stored.passwordHash) else {
                        throw HTTPError(403, "Forbidden", "Changing the password needs the current one in oldPassword.")
                    }
                }
                guard let hash = hasher.hash(newPassword) else { throw HTTPError.overloaded(retryAfter: 2) }
                fields["password"] = nil
                fields["oldPassword"] = nil
                let changes = fields
                pools.write(request, out) { writer in
                    try Self.applyUpdate(writer, id: id, caller: caller, fields: changes, newHash: hash, merge: merge)
                }
                return nil
            }
            return nil
        }
    }

    /// `DELETE /users/:id`: self or admin; removes the record, credentials and sessions.
    func delete(_ id: String, _ request: Request, _ out: ResponseWriter) {
        let access = self.access
        pools.write(request, out, prepare: { reader in
            let caller = try access.caller(request, reader)
            try Self.checkSelfOrAdmin(caller.principal, id: id)
            return caller
        }) { writer, caller in
            try writer.delete(from: Self.users, id: id, scope: AccessScope(principal: caller.principal, level: .shared))
            try writer.deleteCredentials(userID: id)
            try writer.deleteDevices(userID: id)
            return .json(200, "{\"count\":1}")
        }
    }

    static func applyUpdate(_ writer: DocumentWriter, id: String, caller: Authenticator.Caller, fields: JSONObject,
                            newHash: String?, merge: Bool) throws -> Response {
        try checkSelfOrAdmin(caller.principal, id: id)
        guard let text = try writer.document(in: users, id: id), case .object(let existing) = try JSONParser.parse(text) else {
            throw HTTPError.notFound("No user with _id \"\(id)\".")
        }
        var changes = fields
        if fields["password"] != nil || fields["oldPassword"] != nil {
            throw HTTPError(400, "InvalidDocument", "Change the password with both password and oldPassword.")
        }
        if let name = changes["username"], name != existing["username"] {
            throw HTTPError(400, "InvalidDocument", "username cannot be changed.")
        }
        changes["username"] = existing["username"]
        let scope = AccessScope(principal: caller.principal, level: .shared)
        let stored = merge
            ? try writer.patch(in: users, id: id, changes, scope: scope)
            : try writer.replace(in: users, id: id, changes, scope: scope).text
        if let newHash {
            try writer.setPassword(userID: id, passwordHash: newHash)
            try writer.deleteSessions(userID: id, keeping: caller.principal == .admin ? nil : caller.tokenHash)
        }
        return .json(200, stored)
    }

    static func checkSelfOrAdmin(_ principal: AccessScope.Principal, id: String) throws {
        switch principal {
        case .admin: return
        case .user(let me) where me == id: return
        case .anonymous: throw HTTPError(401, "Unauthorized", "Sign in to change an account.")
        case .user: throw HTTPError(403, "Forbidden", "You may change only your own account.")
        }
    }
}
