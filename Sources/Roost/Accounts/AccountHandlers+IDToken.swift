import Foundation
import Auth
import EventLoop
import HTTP
import JSON
import Store

/// `POST /auth/idtoken`: the native Sign in with Apple / Google / OIDC flow.
/// The app sends the provider's ID token and the raw nonce it hashed into
/// the request; roostd verifies the token (`IDTokenVerifier`, on the
/// `idtoken` pool: no Argon2 on this path), uses it once, and signs in the
/// account its (provider, sub) is linked to, creating one at the first
/// sign-in. Linking by email follows one rule (docs/ACCOUNTS.md): only a
/// provider with `link_by_email` (the Apple and Google presets), only an
/// email the token marks verified, and only onto an account whose own email
/// is verified; any other match is 409, never a silent join.
extension AccountHandlers {
    /// The longest ID token taken (real ones are 1 to 2 kB); openapi.yaml says the same.
    static let maxIDToken = 8192

    static func idTokenFields(_ fields: JSONObject) throws -> (provider: String, token: String, nonce: String) {
        guard let provider = try fields.string("provider"), let token = try fields.string("id_token"), let nonce = try fields.string("nonce"),
              (1...maxIDToken).contains(token.unicodeScalars.count), (1...512).contains(nonce.unicodeScalars.count) else {
            throw HTTPError(.invalidDocument, "Send {\"provider\": …, \"id_token\": …, \"nonce\": the raw nonce whose SHA-256 the token carries}.")
        }
        return (provider, token, nonce)
    }

    /// Verifies on the `idtoken` pool, then runs `then` with the claims (on that thread).
    func verifyingIDToken(_ request: Request, _ out: ResponseWriter, _ fields: JSONObject,
                          then: @escaping @Sendable (OIDCProviders.Verified) -> Void) throws {
        let (provider, token, nonce) = try Self.idTokenFields(fields)
        let (oidc, logger) = (self.oidc, pools.logger)
        // Answered here: with no provider configured the pool never starts, and a job queued there waits forever.
        guard oidc.providers[provider] != nil else { throw OIDCProviders.unknown(provider) }
        let now = Authenticator.now
        _ = oidc.pool.submit({
            do {
                then(try oidc.verify(provider: provider, token: token, nonce: nonce, now: now))
            } catch {
                out.send(ErrorResponses.response(for: error, request, logger))
            }
        }, orAnswer: out, .hashes)
    }

    func idTokenSignIn(_ request: Request, _ out: ResponseWriter) {
        let (pools, hooks, lifetime, accountJobs) = (self.pools, collections.hooks, sessionLifetime, self.accountJobs)
        parsed(request, out) { [self] fields in
            let code = try appleCode(fields)
            try verifyingIDToken(request, out, fields) { verified in
                let pending = HookServices.Pending([])
                pools.write(request, out, committed: { hooks.committed(pending)(); accountJobs.wake() }) { writer in
                    try Self.identitySignIn(writer, verified, request: request, hooks: hooks, pending: pending, lifetime: lifetime, appleCode: code)
                }
            }
        }
    }

    /// The `authorization_code` Sign in with Apple gives the app with the ID
    /// token: kept for the exchange only when Apple's token settings are set
    /// (`oidc_providers.apple.team_id`…), else ignored.
    func appleCode(_ fields: JSONObject) throws -> String? {
        guard let code = try fields.string("authorization_code") else { return nil }
        guard (1...2048).contains(code.utf8.count) else {
            throw HTTPError(.invalidDocument, "authorization_code must be 1–2048 characters.")
        }
        guard accountJobs.apple != nil, try fields.string("provider") == AppleTokens.provider else { return nil }
        return code
    }

    /// Queues exchanging an Apple authorization code for the refresh token
    /// revoked at deletion (`AppleTokens`), in the sign-in's write.
    static func queueAppleExchange(_ writer: any DocumentWriting, _ v: OIDCProviders.Verified, code: String?, userID: String) throws {
        guard let code, v.provider.name == AppleTokens.provider else { return }
        try writer.addAccountJob(kind: AccountJobKind.appleExchange, userID: userID,
                                 payload: AppleTokens.exchangePayload(code: code, clientID: v.claims.audience), nowMilliseconds: Outbox.nowMilliseconds())
    }

    static func replayed() -> HTTPError { OIDCProviders.refusal("it was used before") }

    /// The sign-in's write: the token used once, then the linked account, a linked-by-email one, or a new one.
    static func identitySignIn(_ writer: any DocumentWriting, _ v: OIDCProviders.Verified, request: Request, hooks: HookServices,
                               pending: HookServices.Pending, lifetime: Int64, appleCode: String? = nil) throws -> Response {
        let now = Authenticator.now
        guard try writer.useIDToken(hash: v.tokenHash, expiresAt: v.claims.expiresAt, now: now) else { return replayed().response }
        let (provider, subject) = (v.provider.name, v.claims.subject)
        if let userID = try writer.identityOwner(provider: provider, subject: subject) {
            try queueAppleExchange(writer, v, code: appleCode, userID: userID)
            return try TwoFactor.signInOrTicket(writer, userID: userID, status: 200, lifetime: lifetime)
        }
        let email = v.claims.emailVerified ? v.claims.email.flatMap(EmailAddress.normalised) : nil
        if let email, let owner = try writer.credentials(email: email) {
            guard v.provider.linkByEmail, owner.emailVerified,
                  try writer.addIdentity(provider: provider, subject: subject, userID: owner.userID, email: email, now: now) else {
                return HTTPError(.conflict, "An account already uses this email address: sign in to it, then link \(provider) with POST /auth/idtoken/link.").response
            }
            try queueAppleExchange(writer, v, code: appleCode, userID: owner.userID)
            return try TwoFactor.signInOrTicket(writer, userID: owner.userID, status: 200, lifetime: lifetime)
        }
        // A new account: no password (nothing to guess), the provider's verified email if it has one.
        let id = writer.newID()
        try writer.addCredentials(userID: id, username: "~" + id, email: email, passwordHash: "")
        if let email { try writer.setEmail(userID: id, email: email, verified: true) }
        guard try writer.addIdentity(provider: provider, subject: subject, userID: id, email: email, now: now) else {
            throw StoreError.conflict("This \(provider) account was just linked by another sign-in; try again.")
        }
        try queueAppleExchange(writer, v, code: appleCode, userID: id)
        var document = JSONObject([("_id", .string(id))])
        if let email {
            document["email"] = .string(email)
            document["emailVerified"] = .bool(true)
        }
        let scope = AccessScope(principal: .user(id), level: .shared)
        let text = try hooks.run(.beforeCreate, users, id: id, entity: document, requestID: request.requestID,
                                 scope: scope, writer: writer, pending: pending) { document in
            try writer.insert(into: users, document, scope: scope)
        }
        return .json(201, try signedIn(writer, userID: id, userText: text, lifetime: lifetime))
    }

    /// `POST /auth/idtoken/link` (signed in): links the token's (provider, sub) to the caller's account.
    func linkIdentity(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        let (pools, accountJobs) = (self.pools, self.accountJobs)
        jobs.read(request, out) { [self] _, caller in
            guard case .user(let me) = caller.principal else { throw HTTPError(.unauthorized, "Sign in to link a provider.") }
            let fields = try CollectionHandlers.object(body)
            let code = try appleCode(fields)
            try verifyingIDToken(request, out, fields) { v in
                pools.write(request, out, committed: { accountJobs.wake() }) { writer in
                    try CallerJobs.requireLiveSession(caller, writer)
                    let now = Authenticator.now
                    guard try writer.useIDToken(hash: v.tokenHash, expiresAt: v.claims.expiresAt, now: now) else { return Self.replayed().response }
                    if let owner = try writer.identityOwner(provider: v.provider.name, subject: v.claims.subject) {
                        guard owner == me else { return HTTPError(.conflict, "This \(v.provider.name) account is linked to another account.").response }
                    } else {
                        let email = v.claims.emailVerified ? v.claims.email.flatMap(EmailAddress.normalised) : nil
                        guard try writer.addIdentity(provider: v.provider.name, subject: v.claims.subject, userID: me, email: email, now: now) else {
                            return HTTPError(.conflict, "Your account is linked to another \(v.provider.name) account; unlink it first.").response
                        }
                    }
                    try Self.queueAppleExchange(writer, v, code: code, userID: me)
                    try Self.endAnonymity(writer, userID: me)
                    return .json(200, "{\"provider\":\(JSONWriter.quoted(v.provider.name)),\"linked\":true}")
                }
            }
            return nil
        }
    }

    /// `DELETE /auth/idtoken/link/:provider` (signed in): unlinks, unless it is the account's last way to sign in.
    /// Unlinking Apple revokes its kept refresh token (after the answer).
    func unlinkIdentity(_ provider: String, _ request: Request, _ out: ResponseWriter) {
        let accountJobs = self.accountJobs
        jobs.write(request, out, committed: { accountJobs.wake() }) { writer, caller in
            guard case .user(let me) = caller.principal else { throw HTTPError(.unauthorized, "Sign in to unlink a provider.") }
            let linked = try writer.identities(userID: me)
            guard linked.contains(where: { $0.provider == provider }) else { throw HTTPError.notFound("No \(provider) sign-in is linked.") }
            let hasPassword = !(try writer.credentials(userID: me)?.passwordHash.isEmpty ?? true)
            guard hasPassword || linked.count > 1 else {
                throw HTTPError(.conflict, "This is your account's only way to sign in: set a password (password reset) or link another provider first.")
            }
            if provider == AppleTokens.provider { try AppleTokens.queueRevoke(writer, userID: me) }
            _ = try writer.deleteIdentity(provider: provider, userID: me)
            return .json(200, "{\"provider\":\(JSONWriter.quoted(provider)),\"linked\":false}")
        }
    }
}

extension AccountHandlers {
    /// `GET /auth/account` (signed in): how the account signs in — whether it
    /// has a password, its email and whether it is verified, two-factor, guest,
    /// and its linked providers.
    func accountSecurity(_ request: Request, _ out: ResponseWriter) {
        jobs.read(request, out) { reader, caller in
            guard case .user(let me) = caller.principal else { throw HTTPError(.unauthorized, "Sign in to see your account.") }
            guard let body = try Self.security(reader, userID: me) else { throw HTTPError.notFound("Your account no longer exists.") }
            return .json(200, body)
        }
    }

    /// The account's sign-in methods as `GET /auth/account` and the admin's
    /// `GET /admin/users/:id/account` show them; nil: no such account.
    static func security(_ reader: any DocumentReading, userID: String) throws -> String? {
        guard let account = try reader.credentials(userID: userID) else { return nil }
        let identities = try reader.identities(userID: userID).map { i in
            JSONValue.object(JSONObject([("provider", .string(i.provider)), ("email", i.email.map { .string($0) } ?? .null),
                                         ("linkedAt", .string(Timestamp.format(Date(timeIntervalSince1970: TimeInterval(i.createdAt)))))]))
        }
        let body = JSONObject([
            ("hasPassword", .bool(!account.passwordHash.isEmpty)),
            ("email", account.email.map { .string($0) } ?? .null),
            ("emailVerified", .bool(account.emailVerified)),
            ("twoFactor", .bool(account.totpEnabled)),
            ("anonymous", .bool(account.anonymousSince != nil)),
            ("identities", .array(identities)),
        ])
        var bytes: [UInt8] = []
        JSONWriter.write(.object(body), into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
