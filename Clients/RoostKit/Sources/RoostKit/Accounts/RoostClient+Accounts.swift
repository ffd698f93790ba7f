import Foundation

extension RoostClient {
    /// Creates an account and signs in as it (`POST /users`).
    ///
    /// The profile's fields are stored on the user record beside `username`;
    /// fields named in the server's `users.private_fields` (default `email`)
    /// are shown only to the user.
    ///
    /// - Parameters:
    ///   - username: 3 to 64 of `A-Z a-z 0-9 . _ @ -`.
    ///   - password: at least 8 bytes.
    ///   - profile: any `Encodable` object, such as `["firstName": "Ada"]`.
    /// - Returns: the new session, also saved in the token store.
    @discardableResult
    public func signUp<Profile: Encodable>(username: String, password: String, profile: Profile) async throws -> RoostSession {
        var body = try JSONValue(encoding: profile).objectValue ?? [:]
        body["username"] = .string(username)
        body["password"] = .string(password)
        return try await begin(try await call("POST", ["users"], body: Self.body(JSONValue.object(body))))
    }

    /// Creates an account with no profile fields and signs in as it.
    @discardableResult
    public func signUp(username: String, password: String) async throws -> RoostSession {
        try await signUp(username: username, password: password, profile: [String: JSONValue]())
    }

    /// Signs in (`POST /login`); the session is saved in the token store.
    ///
    /// Wrong credentials throw ``ServerError/Code/invalidCredentials``; too many
    /// failures, ``ServerError/Code/tooManyAttempts`` with `retryAfter`. An
    /// account with two-factor on throws ``RoostError/twoFactorRequired(_:)``:
    /// finish with ``verifyTwoFactor(ticket:code:)``.
    @discardableResult
    public func logIn(username: String, password: String) async throws -> RoostSession {
        let body: JSONValue = ["username": .string(username), "password": .string(password)]
        return try await begin(try await call("POST", ["login"], body: Self.body(body)))
    }

    /// Signs in with the account's email address (in any case) and password
    /// (`POST /login`). As ``logIn(username:password:)``; an address not
    /// verified yet throws ``ServerError/Code/emailNotVerified`` while the
    /// server's `unverified_login` is off.
    @discardableResult
    public func logIn(email: String, password: String) async throws -> RoostSession {
        let body: JSONValue = ["email": .string(email), "password": .string(password)]
        return try await begin(try await call("POST", ["login"], body: Self.body(body)))
    }

    /// Revokes the session on the server (`POST /logout`) and forgets it here.
    /// The local forgetting happens even when the server cannot be reached.
    public func logOut() async throws {
        defer {
            state.set(nil)
            try? tokenStore.clear()
            announce(.signedOut)
        }
        guard session != nil else { return }
        do { try await call("POST", ["logout"]) } catch RoostError.server(let e) where e.status == 401 { }
    }

    /// The signed-in user's own record, private fields included (`GET /users/me`).
    public func currentUser() async throws -> RoostUser {
        guard session != nil else { throw RoostError.notSignedIn }
        return try await call("GET", ["users", "me"]).decode(RoostUser.self)
    }

    /// The member directory (`GET /users`), filtered and sorted like any list.
    public func users(_ query: Query = Query()) async throws -> [RoostUser] {
        try await call("GET", ["users"], query: query.parameters).decode([RoostUser].self)
    }

    /// One page of the member directory with the next page's cursor (keyset
    /// paging, as ``RoostCollection/page(_:)``: pass `next` to ``Query/after(_:)``).
    public func usersPage(_ query: Query = Query()) async throws -> (users: [RoostUser], next: String?) {
        let reply = try await call("GET", ["users"], query: query.parameters)
        return (try reply.decode([RoostUser].self), reply.header("X-Roost-Next"))
    }

    /// Edits the signed-in user's profile with a JSON Merge Patch
    /// (`PATCH /users/:id`): members set to `null` are removed; `username`
    /// cannot change (409 `ImmutableField`). Returns the new record, also kept
    /// in the session.
    ///
    /// - Parameter condition: ``WriteCondition/unchanged(etag:)`` refuses with 412 if the record changed meanwhile.
    @discardableResult
    public func updateProfile(_ patch: JSONValue, condition: WriteCondition = .always) async throws -> RoostUser {
        guard let session else { throw RoostError.notSignedIn }
        let user = try await call("PATCH", ["users", session.user.id], headers: condition.headers, body: Self.body(patch)).decode(RoostUser.self)
        try remember(user)
        return user
    }

    /// Changes the password (`PATCH /users/:id` with `oldPassword`). The
    /// server revokes the user's other sessions and keeps this one. A wrong
    /// `old` throws ``ServerError/Code/forbidden``; repeated wrong ones,
    /// ``ServerError/Code/tooManyAttempts`` with `retryAfter`. With two-factor
    /// on, pass a current code (or a recovery code) as `twoFactorCode`, else
    /// ``ServerError/Code/twoFactorRequired``.
    public func changePassword(from old: String, to new: String, twoFactorCode: String? = nil) async throws {
        guard let session else { throw RoostError.notSignedIn }
        var body: JSONValue = ["password": .string(new), "oldPassword": .string(old)]
        if let twoFactorCode { body["twoFactorCode"] = .string(twoFactorCode) }
        let user = try await call("PATCH", ["users", session.user.id], body: Self.body(body)).decode(RoostUser.self)
        try remember(user)
    }

    /// Deletes the signed-in user's account (`DELETE /users/:id`): the record,
    /// the credentials and every session; the session is forgotten here too.
    /// References to the user declared on the server apply (409 `Referenced`).
    public func deleteAccount(condition: WriteCondition = .always) async throws {
        guard let session else { throw RoostError.notSignedIn }
        try await call("DELETE", ["users", session.user.id], headers: condition.headers)
        state.set(nil)
        try? tokenStore.clear()
        announce(.signedOut)
    }

    /// Keeps a fresher copy of the signed-in user's record in the session.
    func remember(_ user: RoostUser) throws {
        guard let current = session, current.user.id == user.id else { return }
        let updated = RoostSession(token: current.token, expiresAt: current.expiresAt, user: user)
        state.set(updated)
        announce(.signedIn(user))
        do { try tokenStore.save(updated) } catch { throw RoostError.localStore("cannot save the session: \(error)") }
    }

    /// Starts the session a sign-in answered, or throws
    /// ``RoostError/twoFactorRequired(_:)`` for a 202 two-factor ticket.
    func begin(_ reply: Reply) async throws -> RoostSession {
        if reply.status == 202, let challenge = try? reply.decode(TwoFactorChallenge.self) {
            throw RoostError.twoFactorRequired(challenge)
        }
        let session = try reply.decode(RoostSession.self)
        state.set(session)
        announce(.signedIn(session.user))
        do { try tokenStore.save(session) } catch { throw RoostError.localStore("cannot save the session: \(error)") }
        return session
    }
}
