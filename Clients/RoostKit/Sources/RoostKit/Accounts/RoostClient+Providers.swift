import Foundation

/// Sign in with Apple, Google or another OIDC provider the server names under
/// `oidc_providers`, by the ID token the provider's SDK hands the app (the
/// native flow: no browser, no client secret in the app); and guest accounts.
extension RoostClient {
    /// Signs in with a provider's ID token (`POST /auth/idtoken`): the account
    /// linked to the token's identity, or a new one at the first sign-in.
    ///
    /// - Parameters:
    ///   - provider: a name under the server's `oidc_providers`, such as `apple`
    ///     (an unknown one throws ``ServerError/Code/invalidDocument``).
    ///   - idToken: the JWT as the provider issued it (Apple: `identityToken` as UTF-8).
    ///   - rawNonce: the ``SignInNonce/raw`` whose ``SignInNonce/sha256`` the provider was given.
    /// - Throws: ``ServerError/Code/invalidIDToken`` for a refused token (its
    ///   message names the check); ``ServerError/Code/conflict`` when the token's
    ///   email belongs to an account it may not join (sign in to it, then ``link(provider:idToken:rawNonce:)``);
    ///   ``RoostError/twoFactorRequired(_:)`` for an account with two-factor on.
    @discardableResult
    public func signIn(provider: String, idToken: String, rawNonce: String) async throws -> RoostSession {
        try await begin(try await call("POST", ["auth", "idtoken"], body: Self.body(Self.identity(provider, idToken, rawNonce))))
    }

    /// Links a provider's identity to the signed-in account (`POST /auth/idtoken/link`);
    /// a guest linked this way becomes a full account with the same id.
    public func link(provider: String, idToken: String, rawNonce: String) async throws {
        guard session != nil else { throw RoostError.notSignedIn }
        try await call("POST", ["auth", "idtoken", "link"], body: Self.body(Self.identity(provider, idToken, rawNonce)))
        await refreshUserIfSignedIn()
    }

    /// Unlinks a provider from the signed-in account (`DELETE /auth/idtoken/link/:provider`);
    /// ``ServerError/Code/conflict`` when it is the account's only way to sign in.
    public func unlink(provider: String) async throws {
        guard session != nil else { throw RoostError.notSignedIn }
        try await call("DELETE", ["auth", "idtoken", "link", provider])
    }

    /// Makes a guest account and signs in as it (`POST /auth/anonymous`),
    /// when the server has `anonymous_accounts: true` (else
    /// ``ServerError/Code/forbidden``). The guest writes documents and
    /// uploads files like any user and keeps them when it upgrades.
    @discardableResult
    public func signInAsGuest() async throws -> RoostSession {
        try await begin(try await call("POST", ["auth", "anonymous"]))
    }

    /// Gives the signed-in guest credentials (`POST /auth/anonymous/upgrade`):
    /// the same user id, so its documents, files and sessions stay its own.
    /// The server's `signup_requires` says whether `username`, `email` or both
    /// are needed; an email gets a verification mail. A taken name or address,
    /// or an account that is no guest, throws ``ServerError/Code/conflict``.
    @discardableResult
    public func upgradeGuest(username: String? = nil, email: String? = nil, password: String) async throws -> RoostUser {
        guard session != nil else { throw RoostError.notSignedIn }
        var body: JSONValue = ["password": .string(password)]
        if let username { body["username"] = .string(username) }
        if let email { body["email"] = .string(email) }
        struct Upgraded: Decodable { let user: RoostUser }
        let user = try await call("POST", ["auth", "anonymous", "upgrade"], body: Self.body(body)).decode(Upgraded.self).user
        try remember(user)
        return user
    }

    static func identity(_ provider: String, _ idToken: String, _ rawNonce: String) -> JSONValue {
        ["provider": .string(provider), "id_token": .string(idToken), "nonce": .string(rawNonce)]
    }
}
