/// Accounts: credentials, emails and their one-time codes, sign-in
/// identities, two-factor, sessions and anonymous users.
public protocol AccountsWriting: SessionLookup {
    func credentials(username: String) throws -> CredentialRecord?
    func credentials(userID: String) throws -> CredentialRecord?
    func addCredentials(userID: String, username: String, passwordHash: String) throws
    func addCredentials(userID: String, username: String, email: String?, passwordHash: String) throws
    func credentials(email: String) throws -> CredentialRecord?
    func setEmail(userID: String, email: String?, verified: Bool) throws
    func saveAccountCode(_ code: AccountCode) throws
    func accountCode(userID: String, purpose: String) throws -> AccountCode?
    func accountCode(linkHash: String) throws -> AccountCode?
    func countCodeAttempt(userID: String, purpose: String) throws
    func deleteAccountCode(userID: String, purpose: String, codeHash: String?) throws -> Bool
    func deleteAccountCodes(userID: String) throws
    func identityOwner(provider: String, subject: String) throws -> String?
    func addIdentity(provider: String, subject: String, userID: String, email: String?, now: Int64) throws -> Bool
    func deleteIdentity(provider: String, userID: String) throws -> Bool
    func identities(userID: String) throws -> [IdentityRecord]
    func deleteIdentities(userID: String) throws
    func useIDToken(hash: String, expiresAt: Int64, now: Int64) throws -> Bool
    func setAnonymous(userID: String, since: Int64?) throws
    func upgradeCredentials(userID: String, username: String, email: String?, passwordHash: String) throws
    func staleAnonymousUsers(idleSince: Int64, limit: Int) throws -> [String]
    func setTwoFactor(userID: String, secret: String?, enabled: Bool, recovery: [String]) throws
    func useTwoFactorStep(userID: String, step: Int64) throws -> Bool
    func setPassword(userID: String, passwordHash: String) throws
    func createSession(userID: String, tokenHash: String, now: Int64, lifetime: Int64) throws
    func renewSession(tokenHash: String, now: Int64, lifetime: Int64) throws
    func deleteSession(tokenHash: String) throws -> Bool
    func deleteSessions(userID: String, keeping: String?) throws
    func deleteCredentials(userID: String) throws
    func revokeSessions(userID: String, id: String?) throws -> Int
}
