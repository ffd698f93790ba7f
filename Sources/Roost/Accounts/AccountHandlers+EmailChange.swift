import Auth
import EventLoop
import HTTP
import JSON
import Store

/// Changing an account's email: the signed-in user asks with their
/// password (a sensitive change: a stolen session alone cannot move the
/// account to another address), a code and link go to the new address, and
/// presenting either moves the account there, verified; the old address is
/// told. A new address that has an account gets a notice instead of a code
/// (and the same 202).
extension AccountHandlers {
    static let passwordNeeded = HTTPError(.forbidden, "Changing the email needs the account's password in \"password\".")

    /// `POST /auth/email-change/request` `{email, password}` (signed in).
    func requestEmailChange(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        let (pools, hasher, mail, decoy) = (self.pools, self.hasher, self.mail, decoyHash)
        let lifetime = Int64(settings.codeLifetime)
        jobs.read(request, out) { [self] _, caller in
            guard case .user(let id) = caller.principal else { throw HTTPError(.unauthorized, "Sign in to change your email.") }
            let fields = try CollectionHandlers.object(body)
            let email = try Self.email(fields)
            guard let password = try fields.string("password") else { throw Self.passwordNeeded }
            let twoFactorCode = try fields.string("twoFactorCode")
            let now = Authenticator.now
            counting(request, out, { writer in
                try CallerJobs.requireLiveSession(caller, writer)
                return try LoginThrottle.reserve(writer, userID: id, remote: request.remoteAddress, now: now)
            }) { reservation in
                let accepted = pools.hashers.submit({
                    guard hasher.verify(password, against: reservation.stored?.passwordHash ?? decoy) else {
                        return out.send(HTTPError(.invalidCredentials, "The password is incorrect.").response)
                    }
                    pools.write(request, out, committed: { mail.wake() }) { writer in
                        let now = Authenticator.now
                        try LoginThrottle.succeeded(writer, reservation, userID: id, now: now)
                        if let refusal = try TwoFactor.gate(writer, userID: id, code: twoFactorCode, now: now) { return refusal }
                        let keys = [("mail:\(email)", AccountCodes.mailRule), ("mailacct:\(id)", AccountCodes.mailRule),
                                    ("mailip:\(LoginThrottle.addressKey(request.remoteAddress))", AccountCodes.clientRule)]
                        if let wait = try AccountCodes.charge(writer, keys, now: now) { return AccountCodes.throttled(wait: wait).response }
                        if let owner = try writer.credentials(email: email) {
                            if owner.userID == id { throw HTTPError(.invalidDocument, "That is already your email address.") }
                            try mail.enqueue(writer, .accountExists, to: email, values: [:])
                        } else {
                            let (code, link) = try AccountCodes.issue(writer, userID: id, purpose: .emailChange, email: email,
                                                                      lifetime: lifetime, now: now)
                            try mail.enqueue(writer, .emailChange, to: email, values: ["code": code, "link": mail.link(.emailChange, link)])
                        }
                        return Self.mailQueued
                    }
                }, lane: HashLane.credentials.rawValue)
                if !accepted {
                    pools.background { try LoginThrottle.refund($0, reservation) }
                    out.send(Overload.hashes.error.response)
                }
            }
            return nil
        }
    }

    /// `POST /auth/email-change`: `{code}` (signed in) or `{token}` (the link) moves the account to the new address.
    func confirmEmailChange(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        let (pools, mail) = (self.pools, self.mail)
        jobs.read(request, out) { _, caller in
            let proof = try AccountCodes.proof(try CollectionHandlers.object(body))
            var userID: String? = nil
            if case .code = proof {
                guard case .user(let id) = caller.principal else { throw HTTPError(.unauthorized, "Sign in to confirm with a code.") }
                userID = id
            }
            let account = userID
            pools.write(request, out, committed: { mail.wake() }) { writer in try Self.changeEmail(writer, proof: proof, userID: account, mail: mail) }
            return nil
        }
    }

    /// The email change's write: the code checked (and counted), used, the address moved.
    static func changeEmail(_ writer: any DocumentsWriting & AccountsWriting & LoginThrottleWriting & PushWriting & MailWriting, proof: AccountCodes.Proof, userID: String?, mail: MailOutbox) throws -> Response {
        let now = Authenticator.now
        if let userID, let wait = try AccountCodes.charge(writer, [("code:user:\(userID)", AccountCodes.guessRule)], now: now) {
            return AccountCodes.throttled(wait: wait).response
        }
        guard let code = try AccountCodes.check(writer, proof: proof, userID: userID, purpose: .emailChange, now: now),
              let account = try writer.credentials(userID: code.userID) else {
            return AccountCodes.invalidCode.response
        }
        try writer.deleteAccountCode(userID: code.userID, purpose: code.purpose, codeHash: nil)
        do {
            try writer.setEmail(userID: code.userID, email: code.email, verified: true)
        } catch let error as StoreError where error.isEmailTaken {
            return HTTPError(.emailTaken, "That email address has an account now.").response
        }
        try recordEmail(writer, userID: code.userID, email: code.email)
        if let old = account.email, old != code.email {
            try mail.enqueue(writer, .emailChanged, to: old, values: ["email": code.email])
        }
        return .json(200, "{\"email\":\(JSONWriter.quoted(code.email)),\"emailVerified\":true}")
    }

    /// A mail's link without its token (cut short by a mail client, or typed).
    static let incompleteLink = Response.html(400, HTMLPages.page(title: "Link", body: "<h1>This link is incomplete</h1>"))

    /// `GET /auth/verify-email?token=…` and `GET /auth/email-change?token=…`:
    /// the links in mails, for a browser: used at once, answered with a page.
    func linkPage(_ request: Request, _ out: ResponseWriter, purpose: AccountCodes.Purpose) {
        guard let token = request.query["token"], !token.isEmpty else { return out.send(Self.incompleteLink) }
        let (pools, mail, app) = (self.pools, self.mail, settings.appName)
        pools.write(request, out, committed: { mail.wake() }) { writer in
            let answer = purpose == .emailChange ? try Self.changeEmail(writer, proof: .link(token), userID: nil, mail: mail)
                                                  : try Self.verify(writer, proof: .link(token), email: nil)
            let done = purpose == .emailChange ? "Your new email address is confirmed." : "Your email address is verified."
            return answer.status == 200
                ? .html(200, HTMLPages.page(title: app, body: "<h1>\(HTMLEscape.escape(app))</h1><p>\(done) You can go back to the app.</p>"))
                : .html(answer.status, HTMLPages.page(title: app, body: "<h1>\(HTMLEscape.escape(app))</h1><p>This link is wrong, expired or already used. Ask the app for a new one.</p>"))
        }
    }

    /// `GET /auth/password-reset?token=…`: a form that posts the token and a
    /// new password to `POST /auth/password-reset` (nothing is used by
    /// opening it, so mail scanners that follow links spend nothing).
    func resetPage(_ request: Request, _ out: ResponseWriter) {
        guard let token = request.query["token"], !token.isEmpty else { return out.send(Self.incompleteLink) }
        let app = HTMLEscape.escape(settings.appName)
        let body = """
            <h1>\(app)</h1><p>Choose a new password (8 characters or more).</p>
            <form id="f"><input type="password" id="p" minlength="8" maxlength="1024" required autocomplete="new-password">
            <button>Set password</button></form><p id="m"></p>
            <script>
            document.getElementById('f').onsubmit = async (e) => {
              e.preventDefault();
              const r = await fetch('reset-password-endpoint', {method: 'POST', headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({token: \(JSONWriter.quoted(token).replacingOccurrences(of: "<", with: "\\u003c")), password: document.getElementById('p').value})});
              document.getElementById('m').textContent = r.ok ? 'Your password is set. You can go back to the app.'
                : (await r.json()).description;
            };
            </script>
            """.replacingOccurrences(of: "reset-password-endpoint", with: "password-reset")
        out.send(.html(200, HTMLPages.page(title: settings.appName, body: body)))
    }
}
