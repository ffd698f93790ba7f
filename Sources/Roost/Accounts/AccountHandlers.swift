import Auth
import Foundation
import EventLoop
import HTTP
import Hooks
import JSON
import Jobs
import Store

/// Sign-up, log-in, log-out and the member directory. Password hashing runs
/// on the hash pool; the writes that follow run in the writer's group commit.
/// Email flows (verification, reset, email change): AccountHandlers+Email*.swift.
struct AccountHandlers: Sendable {
    let jobs: CallerJobs
    let collections: CollectionHandlers
    let hasher: PasswordHasher
    let sessionLifetime: Int64
    /// Verified against when a username is unknown, so timing reveals nothing.
    let decoyHash: String
    let mail: MailOutbox
    /// Sign-in providers of `POST /auth/idtoken`.
    let oidc: OIDCProviders
    /// Purges deleted accounts' data and calls Apple's token endpoints, after the answers.
    let accountJobs: AccountJobs
    var settings: AccountSettings { mail.settings }

    static let users = AccessPolicy.usersCollection
    /// A log-in body is two short strings; larger ones are refused on the loop
    /// (a size check), before a reader parses them.
    static let maxLoginBody = 16 * 1024

    var pools: StorePools { jobs.pools }

    init(jobs: CallerJobs, collections: CollectionHandlers, hasher: PasswordHasher, sessionLifetime: Int64, mail: MailOutbox,
         oidc: OIDCProviders, accountJobs: AccountJobs) {
        self.oidc = oidc
        self.accountJobs = accountJobs
        self.jobs = jobs
        self.collections = collections
        self.hasher = hasher
        self.sessionLifetime = sessionLifetime
        self.mail = mail
        decoyHash = hasher.decoyHash()
    }

    /// What a sign-up names its account by.
    struct SignUpNames: Sendable {
        let username: String?
        let email: String?
    }

    /// The username and email of a sign-up, as `signup_requires` wants them.
    static func signUpNames(_ profile: JSONObject, requires: AccountSettings.Required) throws -> SignUpNames {
        let username = profile["username"] == nil ? nil : try Self.username(profile["username"])
        var email: String? = nil
        if let value = profile["email"] {
            guard case .string(let text) = value, let normalised = EmailAddress.normalised(text) else {
                throw HTTPError(.invalidDocument, "email must be an address like name@example.org.")
            }
            email = normalised
        }
        let ok: Bool = switch requires {
        case .username: username != nil
        case .email: email != nil
        case .either: username != nil || email != nil
        case .both: username != nil && email != nil
        }
        guard ok else {
            let what: String = switch requires {
            case .username: "a username"
            case .email: "an email"
            case .either: "a username or an email"
            case .both: "a username and an email"
            }
            throw HTTPError(.invalidDocument, "A sign-up needs \(what) and a password.")
        }
        return SignUpNames(username: username, email: email)
    }

    /// `POST /users`: creates the account and signs it in.
    ///
    /// Cheap things first, on a reader: the body, then whether the name is
    /// taken (409, with no hash: the status says so whatever the timing).
    /// Only then the hash, in the hash pool's sign-up lane, behind every
    /// log-in; the writer's unique index still decides a race for a name.
    ///
    /// With an email, a verification mail is queued. When unverified
    /// accounts may not sign in (`unverified_login: false`) the answer is
    /// 202 with no session, and a taken address gets the very same answer
    /// (its owner is mailed instead): a sign-up never tells whether an
    /// address is registered. When they may, the answer is 201 with a
    /// session, and a taken address is 409 `EmailTaken`, as a taken username is.
    func signUp(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        let (hasher, pools, lifetime, hooks, mail) = (self.hasher, self.pools, sessionLifetime, collections.hooks, self.mail)
        let requires = settings.signupRequires
        pools.readStep(request, out) { reader in
            var profile = try CollectionHandlers.object(body)
            let names = try Self.signUpNames(profile, requires: requires)
            let password = try Self.password(profile["password"], field: "password")
            if let username = names.username, try reader.credentials(username: username) != nil { throw StoreError.usernameTaken }
            profile["password"] = nil
            profile["oldPassword"] = nil
            profile["username"] = names.username.map { .string($0) }
            profile["email"] = names.email.map { .string($0) }
            profile["emailVerified"] = names.email == nil ? nil : .bool(false)
            let fields = profile
            pools.hashing(request, out, lane: .signUp) {
                guard let hash = hasher.hash(password) else { throw Overload.hashes.error }
                Self.create(request, out, pools: pools, hooks: hooks, mail: mail, names: names, hash: hash, fields: fields, lifetime: lifetime)
                return nil
            }
            return nil
        }
    }

    /// The 202 of a sign-up by email while unverified accounts may not sign in.
    static let verificationSent = Response.json(202, "{\"verificationRequired\":true}")

    /// The write of a sign-up whose password is hashed: credentials, the user
    /// record (through the hooks), a session (or 202, see `signUp`).
    private static func create(_ request: Request, _ out: ResponseWriter, pools: StorePools, hooks: HookServices, mail: MailOutbox,
                               names: SignUpNames, hash: String, fields: JSONObject, lifetime: Int64) {
        let pending = HookServices.Pending([])
        let quiet = !mail.settings.unverifiedLogin
        pools.write(request, out, committed: {
            hooks.committed(pending)()
            mail.wake()
        }) { writer in
            let id = writer.newID()
            let now = Authenticator.now
            do {
                // Accounts signed up by email alone get a placeholder no log-in can name (`LoginThrottle`).
                try writer.addCredentials(userID: id, username: names.username ?? "~" + id, email: names.email, passwordHash: hash)
            } catch let error as StoreError where quiet && error.isEmailTaken {
                try mail.enqueue(writer, .accountExists, to: names.email!, values: [:])
                return verificationSent
            }
            try writer.rememberLoginAddress(userID: id, address: LoginThrottle.addressKey(request.remoteAddress), now: now,
                                            forgetBefore: now - LoginThrottle.knownFor)
            var document = fields
            document["_id"] = .string(id)
            // Through the hook path, like any write: users.* hooks and webhooks see sign-ups.
            let scope = AccessScope(principal: .user(id), level: .shared)
            let text = try hooks.run(.beforeCreate, Self.users, id: id, entity: document, requestID: request.requestID,
                                     scope: scope, writer: writer, pending: pending) { document in
                try writer.insert(into: Self.users, document, scope: scope)
            }
            if let email = names.email {
                let (code, link) = try AccountCodes.issue(writer, userID: id, purpose: .verifyEmail, email: email,
                                                          lifetime: Int64(mail.settings.codeLifetime), now: now)
                try mail.enqueue(writer, .verifyEmail, to: email, values: ["code": code, "link": mail.link(.verifyEmail, link)])
                if quiet { return verificationSent }
            }
            return .json(201, try Self.signedIn(writer, userID: id, userText: text, lifetime: lifetime))
        }
    }

    /// `POST /logout`: revokes the presented token.
    func logOut(_ request: Request, _ out: ResponseWriter) {
        guard let token = request.bearerToken else {
            return out.send(HTTPError(.unauthorized, "Send the session token as Authorization: Bearer <token>.").response)
        }
        let pools = self.pools
        pools.write(request, out, committed: { pools.sessionsEnded() }) { writer in
            guard try writer.deleteSession(tokenHash: SessionToken.hash(token)) else {
                throw Authenticator.invalidToken  // the same 401 as every other bad token
            }
            return .json(200, "{\"loggedOut\":true}")
        }
    }

    /// `GET /users/me`: the caller's own record, private fields included,
    /// with `roles`: the roles read with the session (the stored record's
    /// own `roles` field, if a client wrote one, is not shown here). The
    /// ETag is the stored record's, as for `GET /users/:id`.
    func me(_ request: Request, _ out: ResponseWriter) {
        jobs.read(request, out) { reader, caller in
            guard case .user(let id) = caller.principal else {
                throw HTTPError(.unauthorized, "Sign in to see your own record.")
            }
            guard let text = try reader.get(Self.users, id: id) else { throw HTTPError.notFound("Your user record no longer exists.") }
            guard case .object(var record) = try JSONParser.parse(text) else { return Preconditions.entityResponse(200, text) }
            record["roles"] = .array(caller.roles.map { .string($0) })
            return Preconditions.entityResponse(200, record.jsonText, stored: text)
        }
    }

    /// A session for `userID`, as the sign-up and log-in responses show it.
    static func signedIn(_ writer: any AccountsWriting, userID: String, userText: String, lifetime: Int64) throws -> String {
        let (token, hash) = SessionToken.generate()
        let now = Authenticator.now
        try writer.createSession(userID: userID, tokenHash: hash, now: now, lifetime: lifetime)
        let expires = Timestamp.format(Date(timeIntervalSince1970: TimeInterval(now + lifetime)))
        return "{\"user\":\(userText),\"token\":\(JSONWriter.quoted(token)),\"expiresAt\":\"\(expires)\"}"
    }

    static func username(_ value: JSONValue?) throws -> String {
        guard case .string(let name)? = value, (3...64).contains(name.count),
              name.unicodeScalars.allSatisfy({ CharacterSetLite.usernameAllowed($0) }) else {
            throw HTTPError(.invalidDocument, "username must be 3–64 characters: letters, digits, '.', '_', '-', '@'.")
        }
        return name
    }

    static func password(_ value: JSONValue?, field: String) throws -> String {
        guard case .string(let password)? = value, (8...1024).contains(password.unicodeScalars.count) else {
            throw HTTPError(.invalidDocument, "\(field) must be a string of 8 to 1024 characters.")
        }
        return password
    }
}

/// Character rules without Foundation's CharacterSet.
enum CharacterSetLite {
    static func usernameAllowed(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-", "@": return true
        default: return false
        }
    }
}
