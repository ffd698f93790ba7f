import Foundation

/// What an email sign-up led to (``RoostClient/signUp(email:password:username:profile:)``).
public enum SignUpOutcome: Sendable, Equatable {
    /// The account exists and is signed in (the server lets unverified addresses sign in).
    case signedIn(RoostSession)
    /// No session yet: the server mailed a code and a link to the address
    /// (or, when the address is taken, told its owner: the answer is the same).
    /// Verify it with ``RoostClient/verifyEmail(email:code:)``, then log in.
    case verificationRequired
}

/// Accounts by email: sign-up, verification, password reset and moving the
/// account to another address. Mails carry a 6-digit code and a link; the
/// calls here take the code (or the link's token, for an app that handles
/// the link as a universal link).
extension RoostClient {
    /// Creates an account with an email address (`POST /users`), and a
    /// username too when the server's `signup_requires` asks for one.
    ///
    /// The server mails a verification code. While it lets unverified
    /// addresses sign in (`unverified_login`, the default) the answer is
    /// ``SignUpOutcome/signedIn(_:)`` and a taken address throws
    /// ``ServerError/Code/conflict``; otherwise it is
    /// ``SignUpOutcome/verificationRequired``, whether or not the address was taken.
    @discardableResult
    public func signUp<Profile: Encodable>(email: String, password: String, username: String? = nil,
                                           profile: Profile) async throws -> SignUpOutcome {
        var body = try JSONValue(encoding: profile).objectValue ?? [:]
        body["email"] = .string(email)
        body["password"] = .string(password)
        if let username { body["username"] = .string(username) }
        let reply = try await call("POST", ["users"], body: Self.body(JSONValue.object(body)))
        if reply.status == 202 { return .verificationRequired }
        return .signedIn(try await begin(reply))
    }

    /// Creates an account with an email address and no profile fields.
    @discardableResult
    public func signUp(email: String, password: String, username: String? = nil) async throws -> SignUpOutcome {
        try await signUp(email: email, password: password, username: username, profile: [String: JSONValue]())
    }

    /// Mails a new verification code and link to `email`
    /// (`POST /auth/verify-email/request`). The server answers the same whether
    /// or not the address has an account; too many requests throw
    /// ``ServerError/Code/tooManyAttempts``.
    public func requestVerification(email: String) async throws {
        try await call("POST", ["auth", "verify-email", "request"], body: Self.body(["email": JSONValue.string(email)]))
    }

    /// Verifies `email` with the 6-digit code mailed to it (`POST /auth/verify-email`).
    /// A wrong, used or expired code throws ``ServerError/Code/invalidCode``.
    public func verifyEmail(email: String, code: String) async throws {
        try await call("POST", ["auth", "verify-email"], body: Self.body(["email": JSONValue.string(email), "code": .string(code)]))
        await refreshUserIfSignedIn()
    }

    /// Verifies an address with the token of the mail's link.
    public func verifyEmail(token: String) async throws {
        try await call("POST", ["auth", "verify-email"], body: Self.body(["token": JSONValue.string(token)]))
        await refreshUserIfSignedIn()
    }

    /// Mails a password reset code and link to `email`
    /// (`POST /auth/password-reset/request`); the same answer whether or not
    /// the address has an account.
    public func requestPasswordReset(email: String) async throws {
        try await call("POST", ["auth", "password-reset", "request"], body: Self.body(["email": JSONValue.string(email)]))
    }

    /// Sets a new password with the mailed code (`POST /auth/password-reset`).
    /// Every other session of the account ends; the answer is a new session,
    /// saved here. Two-factor accounts throw ``RoostError/twoFactorRequired(_:)``
    /// (the new password is already set).
    @discardableResult
    public func resetPassword(email: String, code: String, newPassword: String) async throws -> RoostSession {
        let body: JSONValue = ["email": .string(email), "code": .string(code), "password": .string(newPassword)]
        return try await begin(try await call("POST", ["auth", "password-reset"], body: Self.body(body)))
    }

    /// Sets a new password with the token of the mail's link.
    @discardableResult
    public func resetPassword(token: String, newPassword: String) async throws -> RoostSession {
        let body: JSONValue = ["token": .string(token), "password": .string(newPassword)]
        return try await begin(try await call("POST", ["auth", "password-reset"], body: Self.body(body)))
    }

    /// Asks to move the signed-in account to `newEmail`
    /// (`POST /auth/email-change/request`): a code goes to the new address.
    /// The password is checked (and counted as a log-in attempt); with
    /// two-factor on, pass a current code as `twoFactorCode`.
    public func requestEmailChange(to newEmail: String, password: String, twoFactorCode: String? = nil) async throws {
        guard session != nil else { throw RoostError.notSignedIn }
        var body: JSONValue = ["email": .string(newEmail), "password": .string(password)]
        if let twoFactorCode { body["twoFactorCode"] = .string(twoFactorCode) }
        try await call("POST", ["auth", "email-change", "request"], body: Self.body(body))
    }

    /// Moves the signed-in account to the new address with the code mailed
    /// there (`POST /auth/email-change`); returns the new, verified address.
    @discardableResult
    public func confirmEmailChange(code: String) async throws -> String {
        guard session != nil else { throw RoostError.notSignedIn }
        return try await confirmEmailChange(["code": .string(code)])
    }

    /// Moves an account to the new address with the token of the mail's link (no session needed).
    @discardableResult
    public func confirmEmailChange(token: String) async throws -> String {
        try await confirmEmailChange(["token": .string(token)])
    }

    private func confirmEmailChange(_ body: JSONValue) async throws -> String {
        struct Moved: Decodable { let email: String }
        let email = try await call("POST", ["auth", "email-change"], body: Self.body(body)).decode(Moved.self).email
        await refreshUserIfSignedIn()
        return email
    }

    /// Reloads the session's copy of the user record (its email and
    /// verification changed); a failure leaves the old copy.
    func refreshUserIfSignedIn() async {
        guard session != nil, let user = try? await currentUser() else { return }
        try? remember(user)
    }
}
