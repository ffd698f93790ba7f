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
struct AccountHandlers: Sendable {
    let jobs: CallerJobs
    let collections: CollectionHandlers
    let hasher: PasswordHasher
    let sessionLifetime: Int64
    /// Verified against when a username is unknown, so timing reveals nothing.
    let decoyHash: String

    static let users = AccessPolicy.usersCollection
    /// A log-in body is two short strings; larger ones are refused on the loop
    /// (a size check), before a reader parses them.
    static let maxLoginBody = 16 * 1024

    var pools: StorePools { jobs.pools }

    init(jobs: CallerJobs, collections: CollectionHandlers, hasher: PasswordHasher, sessionLifetime: Int64) {
        self.jobs = jobs
        self.collections = collections
        self.hasher = hasher
        self.sessionLifetime = sessionLifetime
        decoyHash = hasher.decoyHash()
    }

    /// `POST /users`: creates the account and signs it in.
    ///
    /// Cheap things first, on a reader: the body, then whether the name is
    /// taken (409, with no hash: the status says so whatever the timing).
    /// Only then the hash, in the hash pool's sign-up lane, behind every
    /// log-in; the writer's unique index still decides a race for a name.
    func signUp(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        let (hasher, pools, lifetime, hooks) = (self.hasher, self.pools, sessionLifetime, collections.hooks)
        pools.readStep(request, out) { reader in
            var profile = try CollectionHandlers.object(body)
            let username = try Self.username(profile["username"])
            let password = try Self.password(profile["password"], field: "password")
            if try reader.credentials(username: username) != nil { throw StoreError.usernameTaken }
            profile["password"] = nil
            profile["oldPassword"] = nil
            profile["username"] = .string(username)
            let fields = profile
            pools.hashing(request, out, lane: .signUp) {
                guard let hash = hasher.hash(password) else { throw Overload.hashes.error }
                Self.create(request, out, pools: pools, hooks: hooks, username: username, hash: hash, fields: fields, lifetime: lifetime)
                return nil
            }
            return nil
        }
    }

    /// The write of a sign-up whose password is hashed: credentials, the user
    /// record (through the hooks), a session.
    private static func create(_ request: Request, _ out: ResponseWriter, pools: StorePools, hooks: HookServices,
                               username: String, hash: String, fields: JSONObject, lifetime: Int64) {
        let pending = HookServices.Pending([])
        pools.write(request, out, committed: hooks.committed(pending)) { writer in
            let id = writer.newID()
            try writer.addCredentials(userID: id, username: username, passwordHash: hash)
            let now = Authenticator.now
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
            return .json(201, try Self.signedIn(writer, userID: id, userText: text, lifetime: lifetime))
        }
    }

    /// `POST /login`: a new session for the right password; 429 when throttled.
    ///
    /// Four steps: a reader parses the body (never the loop), the writer
    /// counts the attempt against the throttle (`LoginThrottle`) before any
    /// hash runs, a hash thread checks the password, and for the right one
    /// the writer gives the counts back and creates the session.
    func logIn(_ request: Request, _ out: ResponseWriter) {
        guard let body = collections.checkBody(request, out) else { return }
        guard body.count <= Self.maxLoginBody else { return out.send(HTTPError.tooLarge(limit: Self.maxLoginBody).response) }
        pools.readStep(request, out) { [self] _ in
            let (username, password) = try Self.loginFields(body)
            reserve(request, out, username: username, password: password)
            return nil
        }
    }

    /// The username and password of a log-in body.
    static func loginFields(_ body: [UInt8]) throws -> (username: String, password: String) {
        let fields = try CollectionHandlers.object(body)
        guard case .string(let username)? = fields["username"], case .string(let password)? = fields["password"] else {
            throw HTTPError(.invalidDocument, "Send {\"username\": …, \"password\": …}.")
        }
        return (username, password)
    }

    /// The throttle step of a log-in: one writer job counts the attempt, atomically with every other.
    private func reserve(_ request: Request, _ out: ResponseWriter, username: String, password: String) {
        let now = Authenticator.now
        counting(request, out, { writer in
            try LoginThrottle.reserve(writer, username: username, remote: request.remoteAddress, now: now)
        }) { [self] reservation in
            checkPassword(request, out, password: password, reservation: reservation)
        }
    }

    /// Counts a password attempt (`count`, on the writer, atomically with
    /// every other) and hands its reservation to `check`; a refused attempt
    /// gets 429 `TooManyAttempts` with `Retry-After`. `count` answers nil
    /// when there is no password to check (403 `Forbidden`).
    func counting(_ request: Request, _ out: ResponseWriter,
                  _ count: @escaping @Sendable (any DocumentWriting) throws -> LoginThrottle.Decision?,
                  then check: @escaping @Sendable (LoginThrottle.Reservation) -> Void) {
        let logger = pools.logger
        pools.writer.submit(StorePools.WriteJob(operation: count, completion: { result in
            switch result {
            case .failure(let error): out.send(ErrorResponses.response(for: error, request, logger))
            case .success(nil): out.send(Self.oldPasswordNeeded.response)
            case .success(.refused(let wait)?): out.send(LoginThrottle.refusal(wait: wait).response)
            case .success(.granted(let reservation)?): check(reservation)
            }
        }), orAnswer: out, .writes)
    }

    /// The hash step of a log-in whose attempt is counted; on the right password, the session.
    private func checkPassword(_ request: Request, _ out: ResponseWriter, password: String, reservation: LoginThrottle.Reservation) {
        let (hasher, pools, lifetime, decoy, hooks) = (self.hasher, self.pools, sessionLifetime, decoyHash, collections.hooks)
        let accepted = pools.hashers.submit({
            // Unknown usernames check the decoy, so timing reveals nothing.
            let stored = reservation.stored
            guard hasher.verify(password, against: stored?.passwordHash ?? decoy), let stored else {
                return out.send(HTTPError(.invalidCredentials, "The username or password is incorrect.").response)
            }
            // afterLogin hooks run once the new session has committed.
            let pending = HookServices.Pending([])
            pools.write(request, out, committed: hooks.committed(pending)) { writer in
                let now = Authenticator.now
                try LoginThrottle.succeeded(writer, reservation, userID: stored.userID, now: now)
                let text = try writer.document(in: Self.users, id: stored.userID) ?? "{}"
                let response = try Self.signedIn(writer, userID: stored.userID, userText: text, lifetime: lifetime)
                pending.set([AfterContext(event: .afterLogin, collection: Self.users, actor: stored.userID, requestID: request.requestID,
                                         entity: (try? JSONParser.parse(text))?.objectValue ?? JSONObject())])
                return .json(200, response)
            }
        }, lane: HashLane.credentials.rawValue)
        if !accepted {
            // No password was checked: the attempt is not counted.
            pools.background { try LoginThrottle.refund($0, reservation) }
            out.send(Overload.hashes.error.response)
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

    /// `GET /users/me`: the caller's own record, private fields included.
    func me(_ request: Request, _ out: ResponseWriter) {
        jobs.read(request, out) { reader, caller in
            guard case .user(let id) = caller.principal else {
                throw HTTPError(.unauthorized, "Sign in to see your own record.")
            }
            guard let text = try reader.get(Self.users, id: id) else { throw HTTPError.notFound("Your user record no longer exists.") }
            return Preconditions.entityResponse(200, text)
        }
    }

    /// A session for `userID`, as the sign-up and log-in responses show it.
    static func signedIn(_ writer: any DocumentWriting, userID: String, userText: String, lifetime: Int64) throws -> String {
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
