import Foundation

/// The second step a sign-in needs when the account has two-factor on: the
/// server's ticket (5 minutes, 5 tries), to send with a code to
/// ``RoostClient/verifyTwoFactor(ticket:code:)``.
public struct TwoFactorChallenge: Codable, Sendable, Hashable {
    /// The ticket of `POST /auth/2fa/verify`.
    public let ticket: String
}

/// A new TOTP secret (``RoostClient/setUpTwoFactor(password:)``): show
/// `otpauthURI` as a QR code for an authenticator app, or `secret` to type in.
public struct TwoFactorSetup: Codable, Sendable, Hashable {
    /// The base32 secret.
    public let secret: String
    /// `otpauth://totp/…`, for a QR code.
    public let otpauthURI: String
}

/// How the signed-in account signs in (``RoostClient/accountSecurity()``):
/// what a settings screen shows.
public struct AccountSecurity: Codable, Sendable, Hashable {
    /// Whether it has a password (guests and provider-made accounts have none).
    public let hasPassword: Bool
    /// Its address, if any.
    public let email: String?
    /// Whether the address is verified.
    public let emailVerified: Bool
    /// Whether two-factor is on.
    public let twoFactor: Bool
    /// Whether it is a guest (``RoostClient/signInAsGuest()``).
    public let anonymous: Bool
    /// Its linked providers (Sign in with Apple, Google, …).
    public let identities: [Identity]

    /// One linked provider.
    public struct Identity: Codable, Sendable, Hashable {
        public let provider: String
        public let email: String?
        public let linkedAt: String
    }
}

/// Two-factor (TOTP, RFC 6238) and the account's sign-in methods.
extension RoostClient {
    /// Completes a sign-in that threw ``RoostError/twoFactorRequired(_:)``
    /// with a current code from the authenticator app or a recovery code
    /// (`POST /auth/2fa/verify`). A wrong code throws ``ServerError/Code/invalidCode``.
    ///
    /// ```swift
    /// do { try await roost.logIn(email: email, password: password) }
    /// catch RoostError.twoFactorRequired(let challenge) {
    ///     try await roost.verifyTwoFactor(ticket: challenge.ticket, code: await askForCode())
    /// }
    /// ```
    @discardableResult
    public func verifyTwoFactor(ticket: String, code: String) async throws -> RoostSession {
        let body: JSONValue = ["ticket": .string(ticket), "code": .string(code)]
        return try await begin(try await call("POST", ["auth", "2fa", "verify"], body: Self.body(body)))
    }

    /// Makes a TOTP secret for the signed-in account (`POST /auth/2fa/setup`);
    /// two-factor stays off until ``enableTwoFactor(code:)``. The password is
    /// checked (a wrong one throws ``ServerError/Code/forbidden`` or
    /// ``ServerError/Code/invalidCredentials``, as the server says).
    public func setUpTwoFactor(password: String) async throws -> TwoFactorSetup {
        guard session != nil else { throw RoostError.notSignedIn }
        return try await call("POST", ["auth", "2fa", "setup"], body: Self.body(["password": JSONValue.string(password)]))
            .decode(TwoFactorSetup.self)
    }

    /// Turns two-factor on with a first code (`POST /auth/2fa/enable`) and
    /// returns the 10 recovery codes, which the server shows only this once.
    public func enableTwoFactor(code: String) async throws -> [String] {
        guard session != nil else { throw RoostError.notSignedIn }
        struct Enabled: Decodable { let recoveryCodes: [String] }
        return try await call("POST", ["auth", "2fa", "enable"], body: Self.body(["code": JSONValue.string(code)]))
            .decode(Enabled.self).recoveryCodes
    }

    /// Turns two-factor off (`POST /auth/2fa/disable`): the password and a
    /// current (or recovery) code.
    public func disableTwoFactor(password: String, code: String) async throws {
        guard session != nil else { throw RoostError.notSignedIn }
        let body: JSONValue = ["password": .string(password), "twoFactorCode": .string(code)]
        try await call("POST", ["auth", "2fa", "disable"], body: Self.body(body))
    }

    /// How the signed-in account signs in (`GET /auth/account`).
    public func accountSecurity() async throws -> AccountSecurity {
        guard session != nil else { throw RoostError.notSignedIn }
        return try await call("GET", ["auth", "account"]).decode(AccountSecurity.self)
    }
}
