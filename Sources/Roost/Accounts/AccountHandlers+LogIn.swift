import Auth
import EventLoop
import Foundation
import HTTP
import Hooks
import JSON
import Jobs
import Store

/// Log-in by username or email and password, through the throttle.
extension AccountHandlers {
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
            let (login, password) = try Self.loginFields(body)
            reserve(request, out, login: login, password: password)
            return nil
        }
    }

    /// The name (a username or an email, not both) and password of a log-in
    /// body; each a string. An email that is not a valid address is looked
    /// up as given: it finds nothing, like any unknown one, and costs the same.
    static func loginFields(_ body: [UInt8]) throws -> (login: LoginThrottle.LoginName, password: String) {
        let fields = try CollectionHandlers.object(body)
        let (username, email) = (try fields.string("username"), try fields.string("email"))
        guard let password = try fields.string("password") else { throw loginShape }
        switch (username, email) {
        case (let username?, nil): return (.username(username), password)
        case (nil, let email?): return (.email(EmailAddress.normalised(email) ?? email), password)
        default: throw loginShape
        }
    }

    static let loginShape = HTTPError(.invalidDocument,
                                      "Send {\"username\": …, \"password\": …} or {\"email\": …, \"password\": …} (a username or an email, not both).")

    /// The throttle step of a log-in: one writer job counts the attempt, atomically with every other.
    func reserve(_ request: Request, _ out: ResponseWriter, login: LoginThrottle.LoginName, password: String) {
        let now = Authenticator.now
        counting(request, out, { writer in
            try LoginThrottle.reserve(writer, login: login, remote: request.remoteAddress, now: now)
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

    static let emailNotVerified = HTTPError(.emailNotVerified,
                                            "Verify your email address first: POST /auth/verify-email with the code we sent (or ask for a new one).")

    /// The hash step of a log-in whose attempt is counted; on the right password, the session.
    func checkPassword(_ request: Request, _ out: ResponseWriter, password: String, reservation: LoginThrottle.Reservation) {
        let (hasher, pools, lifetime, decoy, hooks) = (self.hasher, self.pools, sessionLifetime, decoyHash, collections.hooks)
        let unverifiedLogin = settings.unverifiedLogin
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
                // Told only to whoever knows the password.
                if !unverifiedLogin, stored.email != nil, let current = try writer.credentials(userID: stored.userID), !current.emailVerified {
                    return Self.emailNotVerified.response
                }
                // Two-factor on: the password was right; a code makes the session (POST /auth/2fa/verify).
                if let current = try writer.credentials(userID: stored.userID), current.totpEnabled {
                    return try TwoFactor.ticket(writer, userID: stored.userID, now: now)
                }
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
}
