/// Work an account deletion leaves for after its answer, kept in
/// `_account_jobs` so that it survives a restart: `purge` (the deleted
/// user's documents and files, by each collection's `on_user_delete`) and
/// `apple_revoke` (revoking a Sign in with Apple refresh token). Claimed
/// under a lease like the mail outbox, so a node that dies mid-job leaves
/// it to the next claim. Also the Apple refresh token kept per identity.
public protocol AccountJobsWriting: AnyObject {
    func addAccountJob(kind: String, userID: String, payload: String?, nowMilliseconds: Int64) throws
    /// Due jobs, each pushed `leaseMilliseconds` into the future.
    func claimAccountJobs(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [AccountJobRecord]
    /// nil `retryAt`: done (the row goes); else due again then, with `error` kept.
    func finishAccountJob(id: Int64, attempts: Int, retryAt: Int64?, error: String?) throws
    /// Jobs waiting, by kind (metrics, tests, the console).
    func accountJobCounts() throws -> [String: Int]
    /// Keeps a provider's refresh token (and the client id it was issued to) with the identity.
    /// - Returns: false when the user has no such identity (any more).
    func setIdentityToken(provider: String, userID: String, clientID: String, token: String) throws -> Bool
    func identityToken(provider: String, userID: String) throws -> (clientID: String, token: String)?
    /// Clears file `id`'s `_acl.creator` (a deleted user's upload kept by
    /// `on_user_delete: anonymise`), with its change-feed row. false: no such file.
    func disownFile(id: String) throws -> Bool
}

/// One row of `_account_jobs`.
public struct AccountJobRecord: Sendable {
    public let id: Int64
    public let kind: String
    public let userID: String
    public let payload: String?
    public let attempts: Int

    public init(id: Int64, kind: String, userID: String, payload: String?, attempts: Int) {
        self.id = id
        self.kind = kind
        self.userID = userID
        self.payload = payload
        self.attempts = attempts
    }
}

/// The kinds of `_account_jobs` rows.
public enum AccountJobKind {
    public static let purge = "purge"
    public static let appleExchange = "apple_exchange"
    public static let appleRevoke = "apple_revoke"
}
