import Auth
import EventLoop
import HTTP
import JSON
import Store

/// Two-factor (TOTP) routes: set up (with the password), enable (with a first
/// code; answers the recovery codes), disable (password and a code), the
/// log-in's second step, and the admin's reset.
extension AccountHandlers {
    /// Checks the signed-in caller's `password` (a counted log-in attempt, as
    /// `oldPassword` is), then runs `then` in a write with the counts given back.
    func withPassword(_ request: Request, _ out: ResponseWriter, caller: Authenticator.Caller, userID: String, password: String,
                      _ then: @escaping @Sendable (any DocumentWriting) throws -> Response) {
        let (pools, hasher, decoy) = (self.pools, self.hasher, decoyHash)
        let now = Authenticator.now
        counting(request, out, { writer in
            try CallerJobs.requireLiveSession(caller, writer)
            return try LoginThrottle.reserve(writer, userID: userID, remote: request.remoteAddress, now: now)
        }) { reservation in
            let accepted = pools.hashers.submit({
                guard hasher.verify(password, against: reservation.stored?.passwordHash ?? decoy) else {
                    return out.send(HTTPError(.invalidCredentials, "The password is incorrect.").response)
                }
                pools.write(request, out) { writer in
                    try LoginThrottle.succeeded(writer, reservation, userID: userID, now: Authenticator.now)
                    return try then(writer)
                }
            }, lane: HashLane.credentials.rawValue)
            if !accepted {
                pools.background { try LoginThrottle.refund($0, reservation) }
                out.send(Overload.hashes.error.response)
            }
        }
    }

    /// A signed-in user's small JSON request: the body and the user's id, on a reader.
    func signedInRequest(_ request: Request, _ out: ResponseWriter,
                         _ step: @escaping @Sendable (JSONObject, String, Authenticator.Caller) throws -> Void) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        jobs.read(request, out) { _, caller in
            guard case .user(let id) = caller.principal else { throw HTTPError(.unauthorized, "Sign in first.") }
            try step(try CollectionHandlers.object(body), id, caller)
            return nil
        }
    }

    /// `POST /auth/2fa/setup` `{password}`: a new secret (not on until enabled).
    func twoFactorSetup(_ request: Request, _ out: ResponseWriter) {
        let app = settings.appName
        signedInRequest(request, out) { [self] fields, id, caller in
            guard let password = try fields.string("password") else { throw HTTPError(.forbidden, "Setting up two-factor needs the password.") }
            withPassword(request, out, caller: caller, userID: id, password: password) { writer in
                guard let account = try writer.credentials(userID: id) else { throw HTTPError.notFound("Your account no longer exists.") }
                if account.totpEnabled { throw HTTPError(.conflict, "Two-factor is on already; disable it first.") }
                let secret = TOTP.base32(TOTP.newSecret())
                try writer.setTwoFactor(userID: id, secret: secret, enabled: false, recovery: [])
                let label = (account.email ?? (account.username.hasPrefix("~") ? id : account.username))
                let uri = "otpauth://totp/\(Self.uriEscape(app)):\(Self.uriEscape(label))?secret=\(secret)&issuer=\(Self.uriEscape(app))&algorithm=SHA1&digits=6&period=30"
                return .json(200, "{\"secret\":\(JSONWriter.quoted(secret)),\"otpauthURI\":\(JSONWriter.quoted(uri))}")
            }
        }
    }

    static func uriEscape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    /// `POST /auth/2fa/enable` `{code}`: turns two-factor on; answers the recovery codes (shown once).
    func twoFactorEnable(_ request: Request, _ out: ResponseWriter) {
        let pools = self.pools
        signedInRequest(request, out) { fields, id, caller in
            guard let code = try fields.string("code") else { throw HTTPError(.invalidDocument, "Send the authenticator's 6-digit code as \"code\".") }
            pools.write(request, out) { writer in
                try CallerJobs.requireLiveSession(caller, writer)
                guard let account = try writer.credentials(userID: id), account.totpSecret != nil, !account.totpEnabled else {
                    throw HTTPError(.conflict, "Set two-factor up first (POST /auth/2fa/setup), or it is on already.")
                }
                switch try TwoFactor.check(writer, account: account, code: code, now: Authenticator.now) {
                case .throttled(let wait): return AccountCodes.throttled(wait: wait).response
                case .wrong: return AccountCodes.invalidCode.response
                case .right:
                    let (codes, hashes) = TwoFactor.recoveryCodes(userID: id)
                    try writer.setTwoFactor(userID: id, secret: account.totpSecret, enabled: true, recovery: hashes)
                    return .json(200, "{\"enabled\":true,\"recoveryCodes\":[\(codes.map(JSONWriter.quoted).joined(separator: ","))]}")
                }
            }
        }
    }

    /// `POST /auth/2fa/disable` `{password, twoFactorCode}`.
    func twoFactorDisable(_ request: Request, _ out: ResponseWriter) {
        signedInRequest(request, out) { [self] fields, id, caller in
            guard let password = try fields.string("password") else { throw HTTPError(.forbidden, "Turning two-factor off needs the password.") }
            let code = try fields.string("twoFactorCode")
            withPassword(request, out, caller: caller, userID: id, password: password) { writer in
                if let refusal = try TwoFactor.gate(writer, userID: id, code: code, now: Authenticator.now) { return refusal }
                try writer.setTwoFactor(userID: id, secret: nil, enabled: false, recovery: [])
                return .json(200, "{\"enabled\":false}")
            }
        }
    }

    /// `POST /auth/2fa/verify` `{ticket, code}`: the second step of a log-in.
    func twoFactorVerify(_ request: Request, _ out: ResponseWriter) {
        let (pools, lifetime) = (self.pools, sessionLifetime)
        parsed(request, out) { fields in
            guard let ticket = try fields.string("ticket"), let code = try fields.string("code") else {
                throw HTTPError(.invalidDocument, "Send {\"ticket\": from the log-in, \"code\": the 6-digit code or a recovery code}.")
            }
            pools.write(request, out) { writer in
                let now = Authenticator.now
                guard ticket.utf8.count <= 128, let stored = try writer.accountCode(linkHash: SessionToken.hash(ticket)),
                      stored.purpose == AccountCodes.Purpose.twoFactor.rawValue, stored.expiresAt > now, stored.attempts < AccountCodes.maxAttempts,
                      let account = try writer.credentials(userID: stored.userID) else {
                    return AccountCodes.invalidCode.response
                }
                switch try TwoFactor.check(writer, account: account, code: code, now: now) {
                case .throttled(let wait): return AccountCodes.throttled(wait: wait).response
                case .wrong:
                    if stored.attempts + 1 >= AccountCodes.maxAttempts {
                        try writer.deleteAccountCode(userID: stored.userID, purpose: stored.purpose, codeHash: nil)
                    } else {
                        try writer.countCodeAttempt(userID: stored.userID, purpose: stored.purpose)
                    }
                    return AccountCodes.invalidCode.response
                case .right:
                    try writer.deleteAccountCode(userID: stored.userID, purpose: stored.purpose, codeHash: nil)
                    let text = try writer.document(in: Self.users, id: stored.userID) ?? "{}"
                    return .json(200, try Self.signedIn(writer, userID: stored.userID, userText: text, lifetime: lifetime))
                }
            }
        }
    }

    /// `DELETE /users/:id/2fa` (admin): turns a user's two-factor off (a lost phone and lost recovery codes).
    func twoFactorReset(_ id: String, _ request: Request, _ out: ResponseWriter) {
        jobs.write(request, out) { writer, caller in
            switch caller.principal {
            case .admin: break
            case .anonymous: throw HTTPError(.unauthorized, "Only the administrator resets two-factor; send the admin token.")
            case .user: throw HTTPError(.forbidden, "Only the administrator resets two-factor.")
            }
            guard try writer.credentials(userID: id) != nil else { throw HTTPError.notFound("No user with _id \"\(id)\".") }
            try writer.setTwoFactor(userID: id, secret: nil, enabled: false, recovery: [])
            try writer.deleteAccountCode(userID: id, purpose: AccountCodes.Purpose.twoFactor.rawValue, codeHash: nil)
            return .json(200, "{\"enabled\":false}")
        }
    }
}
