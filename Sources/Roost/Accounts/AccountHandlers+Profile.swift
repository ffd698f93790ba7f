import Auth
import EventLoop
import HTTP
import JSON
import Store

extension AccountHandlers {
    /// The answer to a password change without the right `oldPassword`.
    static let oldPasswordNeeded = HTTPError(.forbidden, "Changing the password needs the current one in oldPassword.")

    /// `PUT`/`PATCH /users/:id`: self or admin. A new `password` needs the
    /// `oldPassword` (admins excepted) and signs out the user's other sessions.
    ///
    /// Checking `oldPassword` is a log-in attempt: counted against the log-in
    /// throttle (`LoginThrottle`, under the account's username and the
    /// caller's address) before it is hashed, 429 when refused.
    func update(_ id: String, _ request: Request, _ out: ResponseWriter, merge: Bool) {
        guard let body = collections.checkBody(request, out, extraTypes: merge ? ["application/merge-patch+json"] : []) else { return }
        let pools = self.pools, hooks = collections.hooks, mail = self.mail, rules = jobs.access.rules(of: Self.users)
        // Who asks and what they send are settled on a reader, before the body
        // reaches the writer or a hash thread (and never on the loop).
        jobs.read(request, out) { [self] _, caller in
            try Self.checkSelfOrAdmin(caller.principal, id: id)
            var fields = try CollectionHandlers.object(body)
            // A second factor for a password change; never stored in the record.
            let twoFactorCode = try fields.string("twoFactorCode")
            fields["twoFactorCode"] = nil
            guard fields["password"] != nil else {
                let fields = fields
                let pending = HookServices.Pending([])
                pools.write(request, out, committed: { hooks.committed(pending)(); mail.wake() }) { writer in
                    try CallerJobs.requireLiveSession(caller, writer) // still signed in (a log-out may have come meanwhile)
                    return try Self.applyUpdate(writer, id: id, caller: caller, rules: rules, request: request, fields: fields, newHash: nil, merge: merge,
                                                hooks: hooks, pending: pending, mail: mail)
                }
                return nil
            }
            let change = PasswordChange(id: id, caller: caller, request: request, merge: merge,
                                        newPassword: try Self.password(fields["password"], field: "password"), twoFactorCode: twoFactorCode)
            let old = fields["oldPassword"]
            fields["password"] = nil
            fields["oldPassword"] = nil
            let changes = fields
            guard caller.principal != .admin else {
                // The admin resets a password without the old one: nothing to guess, nothing counted.
                pools.hashing(request, out, lane: .credentials) { [self] in
                    storePassword(change, out, changes: changes, reservation: nil)
                    return nil
                }
                return nil
            }
            // Cheap refusals first: no oldPassword is no guess, and costs no count or hash.
            guard case .string(let oldPassword)? = old else { throw Self.oldPasswordNeeded }
            let now = Authenticator.now
            counting(request, out, { writer in
                try CallerJobs.requireLiveSession(caller, writer) // signed out meanwhile: no guess
                return try LoginThrottle.reserve(writer, userID: id, remote: request.remoteAddress, now: now)
            }) { [self] reservation in
                checkOldPassword(change, out, oldPassword, changes: changes, reservation: reservation)
            }
            return nil
        }
    }

    /// A password change on its way: who asks, for which account, the new password.
    struct PasswordChange: Sendable {
        let id: String
        let caller: Authenticator.Caller
        let request: Request
        let merge: Bool
        let newPassword: String
        /// Needed when the account has two-factor on (not for the admin).
        let twoFactorCode: String?
    }

    /// The hash step of a counted `oldPassword`: a wrong one is 403 and stays
    /// counted; the right one goes on to the new hash and the write.
    private func checkOldPassword(_ change: PasswordChange, _ out: ResponseWriter, _ oldPassword: String, changes: JSONObject,
                                  reservation: LoginThrottle.Reservation) {
        let (hasher, pools) = (self.hasher, self.pools)
        let accepted = pools.hashers.submit({ [self] in
            guard let stored = reservation.stored, hasher.verify(oldPassword, against: stored.passwordHash) else {
                return out.send(Self.oldPasswordNeeded.response)
            }
            storePassword(change, out, changes: changes, reservation: reservation)
        }, lane: HashLane.credentials.rawValue)
        if !accepted {
            // No password was checked: the attempt is not counted.
            pools.background { try LoginThrottle.refund($0, reservation) }
            out.send(Overload.hashes.error.response)
        }
    }

    /// On a hash thread: hashes the new password, then writes it with the
    /// profile changes. A checked `oldPassword` (`reservation`) was right: its
    /// counts are given back in the same transaction, or after it if the
    /// write fails (a 412, a log-out meanwhile).
    private func storePassword(_ change: PasswordChange, _ out: ResponseWriter, changes: JSONObject,
                               reservation: LoginThrottle.Reservation?) {
        let (pools, hooks, request, mail) = (self.pools, collections.hooks, change.request, self.mail)
        let succeeded: @Sendable (any DocumentWriting) throws -> Void = { writer in
            if let reservation { try LoginThrottle.succeeded(writer, reservation, userID: change.id, now: Authenticator.now) }
        }
        guard let hash = hasher.hash(change.newPassword) else {
            pools.background(succeeded)
            return out.send(Overload.hashes.error.response)
        }
        let pending = HookServices.Pending([])
        let rules = jobs.access.rules(of: Self.users)
        let job = StorePools.WriteJob(operation: { writer in
            try CallerJobs.requireLiveSession(change.caller, writer) // the hash took a while: still signed in?
            try succeeded(writer)
            if change.caller.principal != .admin,
               let refusal = try TwoFactor.gate(writer, userID: change.id, code: change.twoFactorCode, now: Authenticator.now) {
                return refusal
            }
            return try Self.applyUpdate(writer, id: change.id, caller: change.caller, rules: rules, request: request, fields: changes,
                                        newHash: hash, merge: change.merge, hooks: hooks, pending: pending, mail: mail)
        }, completion: { result in
            switch result {
            case .success:
                hooks.committed(pending)()
                mail.wake()
                pools.sessionsEnded() // the user's other sessions ended: so do their live streams
            case .failure:
                pools.background(succeeded) // undone with the write; the password was still right
            }
            out.send(ErrorResponses.catching(request, pools.logger) { try result.get() })
        })
        if !pools.writer.submit(job, orAnswer: out, .writes) { pools.background(succeeded) }
    }

    /// `DELETE /users/:id`: self or admin; removes the record, credentials and
    /// sessions. Honours `If-Match`/`If-None-Match` against the stored record.
    func delete(_ id: String, _ request: Request, _ out: ResponseWriter) {
        let (hooks, pools, pending, accountJobs) = (collections.hooks, self.pools, HookServices.Pending([]), self.accountJobs)
        jobs.write(request, out, committed: {
            hooks.committed(pending)()
            pools.sessionsEnded()
            accountJobs.wake()
        }, prepare: { caller in
            try Self.checkSelfOrAdmin(caller.principal, id: id)
            return caller
        }) { [rules = jobs.access.rules(of: Self.users)] writer, caller in
            let scope = AccessScope(principal: caller.principal, level: .shared, roles: caller.roles, rules: rules)
            guard let existing = try writer.existingRow(in: Self.users, id: id, scope: scope) else {
                throw HTTPError.notFound("No user with _id \"\(id)\".")
            }
            try Preconditions.check(request, current: existing.document)
            try Self.removeAccount(writer, id: id, existing: existing, scope: scope, hooks: hooks, pending: pending, requestID: request.requestID)
            return .json(200, "{\"count\":1}")
        }
    }

    /// Removes an account through the write path: the user record with its
    /// `beforeDelete` hooks and declared references, then credentials,
    /// sessions, codes, identities and push devices. `DELETE /users/:id`
    /// and the sweep of idle guest accounts (`AnonymousSweeper`) both use it.
    /// In the same transaction it queues what runs after the answer
    /// (`AccountJobs`): the purge of the user's documents and files by each
    /// collection's `on_user_delete`, and revoking a kept Apple refresh token.
    static func removeAccount(_ writer: any DocumentWriting, id: String, existing: StoredRow, scope: AccessScope, hooks: HookServices,
                              pending: HookServices.Pending, requestID: String) throws {
        let cascade = try ReferentialDelete.plan(users, id: id, writer: writer, revealCounts: scope.principal == .admin)
        _ = try hooks.run(.beforeDelete, users, id: id, entity: existing.document, previous: existing.document,
                          requestID: requestID, scope: scope, writer: writer, pending: pending) { _ in
            try ReferentialDelete.run(cascade, hooks: hooks, writer: writer, pending: pending, requestID: requestID) {
                try writer.delete(from: users, id: id, existing: existing, scope: scope)
            }
            return existing.document.jsonText
        }
        try writer.deleteCredentials(userID: id)
        try writer.deleteAccountCodes(userID: id)
        try AppleTokens.queueRevoke(writer, userID: id)
        try writer.addAccountJob(kind: AccountJobKind.purge, userID: id, payload: nil, nowMilliseconds: Outbox.nowMilliseconds())
        try writer.deleteIdentities(userID: id)
        try writer.deleteDevices(userID: id)
    }

    /// The write of a profile update, in the writer's transaction: the stored
    /// record is read once, `If-Match`/`If-None-Match` are checked against it
    /// (412 with its ETag), then it is replaced or patched.
    static func applyUpdate(_ writer: any DocumentWriting, id: String, caller: Authenticator.Caller, rules: CollectionRules?, request: Request,
                            fields: JSONObject, newHash: String?, merge: Bool, hooks: HookServices,
                            pending: HookServices.Pending, mail: MailOutbox) throws -> Response {
        try checkSelfOrAdmin(caller.principal, id: id)
        let scope = AccessScope(principal: caller.principal, level: .shared, roles: caller.roles, rules: rules)
        guard let row = try writer.existingRow(in: users, id: id, scope: scope) else {
            throw HTTPError.notFound("No user with _id \"\(id)\".")
        }
        try Preconditions.check(request, current: row.document)
        let existing = row.document
        var changes = fields
        if fields["password"] != nil || fields["oldPassword"] != nil {
            throw HTTPError(.invalidDocument, "Change the password with both password and oldPassword.")
        }
        // Clients may send the whole record back: an unchanged username is fine.
        if let name = changes["username"], name != existing["username"] {
            throw HTTPError(.immutableField, "username cannot be changed; send the current one or leave it out.")
        }
        changes["username"] = existing["username"]
        try profileEmail(writer, id: id, changes: &changes, existing: existing, mail: mail)
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

    /// `email` and `emailVerified` in a profile change. `emailVerified` is
    /// the server's. While unverified accounts may sign in (`unverified_login`,
    /// the compatible default) a profile may set a new `email` as it always
    /// could: the account's address moves there unverified (409 when taken),
    /// a verification mail goes to it and the old address is told. Otherwise
    /// the address moves only by the email change (a code to the new address).
    static func profileEmail(_ writer: any AccountsWriting & PushWriting & MailWriting, id: String, changes: inout JSONObject, existing: JSONObject,
                             mail: MailOutbox) throws {
        if let value = changes["emailVerified"], value != existing["emailVerified"] {
            throw HTTPError(.immutableField, "emailVerified is the server's; verify with POST /auth/verify-email.")
        }
        changes["emailVerified"] = existing["emailVerified"]
        guard let value = changes["email"], value != existing["email"] else {
            changes["email"] = existing["email"]
            return
        }
        guard mail.settings.unverifiedLogin else {
            throw HTTPError(.immutableField, "email cannot be changed here; change it with POST /auth/email-change/request.")
        }
        guard case .string(let text) = value, let email = EmailAddress.normalised(text) else {
            throw HTTPError(.invalidDocument, "email must be an address like name@example.org.")
        }
        guard let account = try writer.credentials(userID: id) else { throw HTTPError.notFound("No user with _id \"\(id)\".") }
        if account.email == email {
            changes["email"] = existing["email"]
            return
        }
        try writer.setEmail(userID: id, email: email, verified: false)
        changes["email"] = .string(email)
        changes["emailVerified"] = .bool(false)
        let (code, link) = try AccountCodes.issue(writer, userID: id, purpose: .verifyEmail, email: email,
                                                  lifetime: Int64(mail.settings.codeLifetime), now: Authenticator.now)
        try mail.enqueue(writer, .verifyEmail, to: email, values: ["code": code, "link": mail.link(.verifyEmail, link)])
        if let old = account.email { try mail.enqueue(writer, .emailChanged, to: old, values: ["email": email]) }
    }

    static func checkSelfOrAdmin(_ principal: AccessScope.Principal, id: String) throws {
        switch principal {
        case .admin: return
        case .user(let me) where me == id: return
        case .anonymous: throw HTTPError(.unauthorized, "Sign in to change an account.")
        case .user: throw HTTPError(.forbidden, "You may change only your own account.")
        }
    }
}
