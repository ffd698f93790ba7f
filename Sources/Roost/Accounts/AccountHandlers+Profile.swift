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
        let (hasher, pools, hooks) = (self.hasher, self.pools, collections.hooks)
        // Who asks and what they send are settled on a reader, before the body
        // reaches the writer or a hash thread (and never on the loop).
        jobs.read(request, out) { reader, caller in
            try Self.checkSelfOrAdmin(caller.principal, id: id)
            let fields = try CollectionHandlers.object(body)
            guard fields["password"] != nil else {
                let pending = HookServices.Pending([])
                pools.write(request, out, committed: hooks.committed(pending)) { writer in
                    try CallerJobs.requireLiveSession(caller, writer) // still signed in (a log-out may have come meanwhile)
                    return try Self.applyUpdate(writer, id: id, caller: caller, request: request, fields: fields, newHash: nil, merge: merge,
                                                hooks: hooks, pending: pending)
                }
                return nil
            }
            // Read here, on the reader: hash threads hold no connection.
            let stored = caller.principal == .admin ? nil : try reader.credentials(userID: id)
            pools.hashing(request, out) {
                var fields = fields
                let newPassword = try Self.password(fields["password"], field: "password")
                if caller.principal != .admin {
                    guard case .string(let old)? = fields["oldPassword"], let stored,
                          hasher.verify(old, against: stored.passwordHash) else {
                        throw HTTPError(403, "Forbidden", "Changing the password needs the current one in oldPassword.")
                    }
                }
                guard let hash = hasher.hash(newPassword) else { throw Overload.hashes.error }
                fields["password"] = nil
                fields["oldPassword"] = nil
                let changes = fields
                let pending = HookServices.Pending([])
                pools.write(request, out, committed: {
                    hooks.committed(pending)()
                    pools.sessionsEnded() // the user's other sessions ended: so do their live streams
                }) { writer in
                    try CallerJobs.requireLiveSession(caller, writer) // the hash took a while: still signed in?
                    return try Self.applyUpdate(writer, id: id, caller: caller, request: request, fields: changes, newHash: hash, merge: merge,
                                                hooks: hooks, pending: pending)
                }
                return nil
            }
            return nil
        }
    }

    /// `DELETE /users/:id`: self or admin; removes the record, credentials and
    /// sessions. Honours `If-Match`/`If-None-Match` against the stored record.
    func delete(_ id: String, _ request: Request, _ out: ResponseWriter) {
        let (hooks, pools, pending) = (collections.hooks, self.pools, HookServices.Pending([]))
        jobs.write(request, out, committed: {
            hooks.committed(pending)()
            pools.sessionsEnded()
        }, prepare: { caller in
            try Self.checkSelfOrAdmin(caller.principal, id: id)
            return caller
        }) { writer, caller in
            let scope = AccessScope(principal: caller.principal, level: .shared)
            guard let existing = try writer.existingRow(in: Self.users, id: id, scope: scope) else {
                throw HTTPError.notFound("No user with _id \"\(id)\".")
            }
            try Preconditions.check(request, current: existing.document)
            let cascade = try ReferentialDelete.plan(Self.users, id: id, writer: writer)
            _ = try hooks.run(.beforeDelete, Self.users, id: id, entity: existing.document, previous: existing.document,
                              requestID: request.requestID, scope: scope, writer: writer, pending: pending) { _ in
                try ReferentialDelete.run(cascade, hooks: hooks, writer: writer, pending: pending, requestID: request.requestID) {
                    try writer.delete(from: Self.users, id: id, existing: existing)
                }
                return existing.document.jsonText
            }
            try writer.deleteCredentials(userID: id)
            try writer.deleteDevices(userID: id)
            return .json(200, "{\"count\":1}")
        }
    }

    /// The write of a profile update, in the writer's transaction: the stored
    /// record is read once, `If-Match`/`If-None-Match` are checked against it
    /// (412 with its ETag), then it is replaced or patched.
    static func applyUpdate(_ writer: any DocumentWriting, id: String, caller: Authenticator.Caller, request: Request,
                            fields: JSONObject, newHash: String?, merge: Bool, hooks: HookServices,
                            pending: HookServices.Pending) throws -> Response {
        try checkSelfOrAdmin(caller.principal, id: id)
        let scope = AccessScope(principal: caller.principal, level: .shared)
        guard let row = try writer.existingRow(in: users, id: id, scope: scope) else {
            throw HTTPError.notFound("No user with _id \"\(id)\".")
        }
        try Preconditions.check(request, current: row.document)
        let existing = row.document
        var changes = fields
        if fields["password"] != nil || fields["oldPassword"] != nil {
            throw HTTPError(400, "InvalidDocument", "Change the password with both password and oldPassword.")
        }
        // Clients may send the whole record back: an unchanged username is fine.
        if let name = changes["username"], name != existing["username"] {
            throw HTTPError(409, "ImmutableField", "username cannot be changed; send the current one or leave it out.")
        }
        changes["username"] = existing["username"]
        let stored = try hooks.run(.beforeUpdate, users, id: id, entity: changes, isPatch: merge, previous: existing,
                                   requestID: request.requestID, scope: scope, writer: writer, pending: pending) { changes in
            merge ? try writer.patch(in: users, id: id, changes, existing: row, scope: scope)
                  : try writer.replace(in: users, id: id, changes, existing: row, scope: scope).text
        }
        if let newHash {
            try writer.setPassword(userID: id, passwordHash: newHash)
            try writer.deleteSessions(userID: id, keeping: caller.principal == .admin ? nil : caller.tokenHash)
        }
        return Preconditions.entityResponse(200, stored)
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
