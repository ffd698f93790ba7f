import Auth
import EventLoop
import HTTP
import JSON
import Store

/// Email verification and password reset: a request mails a 6-digit code
/// and a link; a confirmation presents either. Every answer to a request is
/// the same 202 whether or not the address has an account (and costs the
/// same work: the same counters, a rendered mail); a confirmation's answer
/// depends only on the code being right.
extension AccountHandlers {
    static let mailQueued = Response.json(202, "{\"sent\":true}")

    /// Parses a small JSON body on a reader (never the loop), then runs `step` there.
    func parsed(_ request: Request, _ out: ResponseWriter, _ step: @escaping @Sendable (JSONObject) throws -> Void) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        pools.readStep(request, out) { _ in
            try step(try CollectionHandlers.object(body))
            return nil
        }
    }

    static func email(_ fields: JSONObject) throws -> String {
        guard let text = try fields.string("email"), let email = EmailAddress.normalised(text) else {
            throw HTTPError(.invalidDocument, "Send {\"email\": \"name@example.org\"}.")
        }
        return email
    }

    /// `POST /auth/verify-email/request` and `POST /auth/password-reset/request`:
    /// mails a code and link to `email` when it has an account (that is not
    /// verified yet, for verification); 202 either way.
    func requestCode(_ request: Request, _ out: ResponseWriter, purpose: AccountCodes.Purpose) {
        let (pools, mail) = (self.pools, self.mail)
        let lifetime = Int64(settings.codeLifetime)
        parsed(request, out) { fields in
            let email = try Self.email(fields)
            pools.write(request, out, committed: { mail.wake() }) { writer in
                let now = Authenticator.now
                let stored = try writer.credentials(email: email)
                var keys = [("mail:\(email)", AccountCodes.mailRule),
                            ("mailip:\(LoginThrottle.addressKey(request.remoteAddress))", AccountCodes.clientRule)]
                if let stored { keys.append(("mailacct:\(stored.userID)", AccountCodes.mailRule)) }
                if let wait = try AccountCodes.charge(writer, keys, now: now) { return AccountCodes.throttled(wait: wait).response }
                let kind: MailTemplates.Kind = purpose == .passwordReset ? .passwordReset : .verifyEmail
                if let stored, purpose == .passwordReset || !stored.emailVerified {
                    let (code, link) = try AccountCodes.issue(writer, userID: stored.userID, purpose: purpose, email: email,
                                                              lifetime: lifetime, now: now)
                    try mail.enqueue(writer, kind, to: email, values: ["code": code, "link": mail.link(purpose, link)])
                } else {
                    // The same work for an address with no account (or one verified already).
                    _ = MailMessage.build(from: mail.settings.smtpFrom, fromName: mail.settings.appName, to: email, subject: "",
                                          text: mail.templates.render(kind, ["code": OneTimeCode.generate()]).text, html: "")
                }
                return Self.mailQueued
            }
        }
    }

    /// `POST /auth/verify-email`: `{email, code}` or `{token}` marks the address verified.
    func verifyEmail(_ request: Request, _ out: ResponseWriter) {
        let pools = self.pools
        parsed(request, out) { fields in
            let proof = try AccountCodes.proof(fields)
            let email = try Self.emailForCode(proof, fields)
            pools.write(request, out) { writer in try Self.verify(writer, proof: proof, email: email) }
        }
    }

    /// A typed code needs the address it was sent to; a link token does not
    /// (an `email` beside it must still be an address: nothing sent is ignored unchecked).
    static func emailForCode(_ proof: AccountCodes.Proof, _ fields: JSONObject) throws -> String? {
        if case .code = proof { return try email(fields) }
        if fields["email"] != nil { _ = try email(fields) }
        return nil
    }

    /// The verification's write: the code checked (and counted), then used.
    static func verify(_ writer: any DocumentsWriting & AccountsWriting & LoginThrottleWriting, proof: AccountCodes.Proof, email: String?) throws -> Response {
        let now = Authenticator.now
        if let email, let wait = try AccountCodes.charge(writer, [("code:\(email)", AccountCodes.guessRule)], now: now) {
            return AccountCodes.throttled(wait: wait).response
        }
        let owner = try email.flatMap { try writer.credentials(email: $0) }
        guard let code = try AccountCodes.check(writer, proof: proof, userID: owner?.userID, purpose: .verifyEmail, now: now) else {
            return AccountCodes.invalidCode.response
        }
        try writer.deleteAccountCode(userID: code.userID, purpose: code.purpose, codeHash: nil)
        if let email { try writer.deleteLoginCounter("code:\(email)") } // a right code is no guess
        // The account's address changed since the code was sent: it proves nothing now.
        guard let account = try writer.credentials(userID: code.userID), account.email == code.email else {
            return AccountCodes.invalidCode.response
        }
        try writer.setEmail(userID: code.userID, email: code.email, verified: true)
        try recordEmail(writer, userID: code.userID, email: code.email)
        return .json(200, "{\"verified\":true,\"email\":\(JSONWriter.quoted(code.email))}")
    }

    /// Mirrors the account's email into its user record (`email`, `emailVerified: true`).
    static func recordEmail(_ writer: any DocumentsWriting, userID: String, email: String) throws {
        guard try writer.document(in: users, id: userID) != nil else { return }
        _ = try writer.patch(in: users, id: userID, JSONObject([("email", .string(email)), ("emailVerified", .bool(true))]))
    }

    /// `POST /auth/password-reset`: `{email, code, password}` or `{token, password}`
    /// sets a new password, ends every session of the account and answers
    /// with a new one (as `/login` does). The code is checked and counted
    /// first, the new password hashed only for a right one, and the code
    /// used in the write that stores it (a second use finds it gone).
    func resetPassword(_ request: Request, _ out: ResponseWriter) {
        let (pools, hasher, lifetime) = (self.pools, self.hasher, sessionLifetime)
        parsed(request, out) { fields in
            let proof = try AccountCodes.proof(fields)
            let email = try Self.emailForCode(proof, fields)
            let password = try Self.password(fields["password"], field: "password")
            let logger = pools.logger
            pools.writer.submit(StorePools.WriteJob(operation: { writer -> Result<AccountCode, HTTPError> in
                let now = Authenticator.now
                if let email, let wait = try AccountCodes.charge(writer, [("code:\(email)", AccountCodes.guessRule)], now: now) {
                    return .failure(AccountCodes.throttled(wait: wait))
                }
                let owner = try email.flatMap { try writer.credentials(email: $0) }
                guard let code = try AccountCodes.check(writer, proof: proof, userID: owner?.userID, purpose: .passwordReset, now: now) else {
                    return .failure(AccountCodes.invalidCode)
                }
                if let email { try writer.deleteLoginCounter("code:\(email)") } // a right code is no guess
                return .success(code)
            }, completion: { result in
                switch result {
                case .failure(let error): out.send(ErrorResponses.response(for: error, request, logger))
                case .success(.failure(let refusal)): out.send(refusal.response)
                case .success(.success(let code)):
                    pools.hashing(request, out, lane: .credentials) {
                        guard let hash = hasher.hash(password) else { throw Overload.hashes.error }
                        pools.write(request, out, committed: { pools.sessionsEnded() }) { writer in
                            try Self.storeReset(writer, code: code, hash: hash, lifetime: lifetime)
                        }
                        return nil
                    }
                }
            }), orAnswer: out, .writes)
        }
    }

    /// The reset's write: uses the code (once), stores the password, ends every session, signs in.
    static func storeReset(_ writer: any DocumentWriting, code: AccountCode, hash: String, lifetime: Int64) throws -> Response {
        guard try writer.deleteAccountCode(userID: code.userID, purpose: code.purpose, codeHash: code.codeHash),
              let account = try writer.credentials(userID: code.userID) else {
            return AccountCodes.invalidCode.response
        }
        try writer.setPassword(userID: code.userID, passwordHash: hash)
        try writer.deleteSessions(userID: code.userID, keeping: nil)
        // The code reached the account's address: that proves it.
        if account.email == code.email, !account.emailVerified {
            try writer.setEmail(userID: code.userID, email: code.email, verified: true)
            try recordEmail(writer, userID: code.userID, email: code.email)
        }
        // Two-factor on: a mailbox alone does not sign in; the new password is set, a code makes the session.
        return try TwoFactor.signInOrTicket(writer, userID: code.userID, status: 200, lifetime: lifetime)
    }
}
