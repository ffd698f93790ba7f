import Auth
import EventLoop
import HTTP
import JSON
import Store

/// Guest accounts (`anonymous_accounts`): `POST /auth/anonymous` makes an
/// account with no credentials and signs it in; `POST /auth/anonymous/upgrade`
/// gives it a username and/or email and a password, and linking a provider
/// (`POST /auth/idtoken/link`) upgrades it too. Either way it keeps its
/// `_id`, and with it its documents, files and sessions. Guests unused for
/// `anonymous_max_idle` are removed by `AnonymousSweeper`.
extension AccountHandlers {
    func anonymousSignUp(_ request: Request, _ out: ResponseWriter) {
        guard settings.anonymousAccounts else {
            return out.send(HTTPError(.forbidden, "Guest accounts are off (anonymous_accounts).").response)
        }
        let (pools, hooks, lifetime) = (self.pools, collections.hooks, sessionLifetime)
        let pending = HookServices.Pending([])
        pools.write(request, out, committed: hooks.committed(pending)) { writer in
            let id = writer.newID()
            let now = Authenticator.now
            try writer.addCredentials(userID: id, username: "~" + id, email: nil, passwordHash: "")
            try writer.setAnonymous(userID: id, since: now)
            let scope = AccessScope(principal: .user(id), level: .shared)
            let document = JSONObject([("_id", .string(id)), ("anonymous", .bool(true))])
            let text = try hooks.run(.beforeCreate, Self.users, id: id, entity: document, requestID: request.requestID,
                                     scope: scope, writer: writer, pending: pending) { document in
                try writer.insert(into: Self.users, document, scope: scope)
            }
            return .json(201, try Self.signedIn(writer, userID: id, userText: text, lifetime: lifetime))
        }
    }

    /// `POST /auth/anonymous/upgrade` `{username?, email?, password}` as the guest.
    func upgradeAnonymous(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        let (pools, hasher, mail, requires) = (self.pools, self.hasher, self.mail, settings.signupRequires)
        jobs.read(request, out) { _, caller in
            guard case .user(let id) = caller.principal else { throw HTTPError(.unauthorized, "Sign in as the guest to upgrade it.") }
            let fields = try CollectionHandlers.object(body)
            let names = try Self.signUpNames(fields, requires: requires)
            let password = try Self.password(fields["password"], field: "password")
            pools.hashing(request, out, lane: .signUp) {
                guard let hash = hasher.hash(password) else { throw Overload.hashes.error }
                pools.write(request, out, committed: { mail.wake() }) { writer in
                    try CallerJobs.requireLiveSession(caller, writer)
                    guard let account = try writer.credentials(userID: id), account.anonymousSince != nil else {
                        throw HTTPError(.conflict, "This account is not a guest: it has credentials already.")
                    }
                    try writer.upgradeCredentials(userID: id, username: names.username ?? "~" + id, email: names.email, passwordHash: hash)
                    var patch = JSONObject([("anonymous", .null)])
                    if let username = names.username { patch["username"] = .string(username) }
                    if let email = names.email {
                        patch["email"] = .string(email)
                        patch["emailVerified"] = .bool(false)
                        let (code, link) = try AccountCodes.issue(writer, userID: id, purpose: .verifyEmail, email: email,
                                                                  lifetime: Int64(mail.settings.codeLifetime), now: Authenticator.now)
                        try mail.enqueue(writer, .verifyEmail, to: email, values: ["code": code, "link": mail.link(.verifyEmail, link)])
                    }
                    let text = try writer.patch(in: Self.users, id: id, patch)
                    return .json(200, "{\"user\":\(text)}")
                }
                return nil
            }
            return nil
        }
    }

    /// After linking a provider: a guest is a guest no more.
    static func endAnonymity(_ writer: any DocumentsWriting & AccountsWriting, userID: String) throws {
        guard let account = try writer.credentials(userID: userID), account.anonymousSince != nil else { return }
        try writer.setAnonymous(userID: userID, since: nil)
        _ = try writer.patch(in: users, id: userID, JSONObject([("anonymous", .null)]))
    }
}
