import JSON

/// What the writer thread asks of the store, whichever engine holds it
/// (`DocumentWriter` on SQLite, `PostgresDocumentWriter` on PostgreSQL).
/// One per process, on the writer thread; operations run inside
/// `commitBatch`, each undone alone when it fails.
public protocol DocumentWriting: SessionLookup {
    func migrate() throws
    /// The declared reference fields whose `_refs` rows every write keeps in step.
    var references: ReferenceSchema { get }
    /// Runs `operations` in one transaction; each outcome after COMMIT.
    func commitBatch<T>(_ operations: [(any DocumentWriting) throws -> T]) -> [Result<T, any Error>]
    /// Inside an operation that makes several writes: settles the writes
    /// made so far (PostgreSQL may hold a create until the batch's end) and
    /// throws the error one of them met. A no-op where writes go at once.
    func settleHeldWrite() throws
    func newID() -> String

    // Documents
    func insert(into collection: String, _ body: JSONObject, scope: AccessScope) throws -> String
    func replace(in collection: String, id: String, _ body: JSONObject, scope: AccessScope) throws -> (created: Bool, text: String)
    func replace(in collection: String, id: String, _ body: JSONObject, existing: StoredRow?, scope: AccessScope) throws -> (created: Bool, text: String)
    func replaceableRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow?
    func existingRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow?
    func patch(in collection: String, id: String, _ patch: JSONObject, scope: AccessScope) throws -> String
    func patch(in collection: String, id: String, _ patch: JSONObject, existing: StoredRow?, scope: AccessScope) throws -> String
    func delete(from collection: String, id: String, scope: AccessScope) throws
    func delete(from collection: String, id: String, existing: StoredRow?) throws
    func document(in collection: String, id: String) throws -> String?

    // Schema: declared indexes and references
    func applyIndexes(_ specs: Set<IndexSpec>, on collection: String) throws
    func applyReferences(_ schema: ReferenceSchema) throws
    func referrerCounts(to collection: String, id: String) throws -> [(collection: String, field: String, count: Int)]
    func referrers(to collection: String, id: String, from: String, field: String) throws -> [String]
    func deferringReferenceChecks<T>(_ body: () throws -> T) throws -> T
    func danglingReferences() throws -> [DanglingReference]

    // Change feed
    func compactChanges(retention: Int64) throws -> Int
    func renewFeedEpoch() throws

    // Accounts and log-in throttling
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
    func loginCounter(_ key: String) throws -> (failures: Int64, windowStart: Int64, blockedUntil: Int64)?
    func saveLoginCounter(_ key: String, failures: Int64, windowStart: Int64, blockedUntil: Int64) throws
    func deleteLoginCounter(_ key: String) throws
    func pruneLoginCounters(windowStartBefore: Int64, now: Int64, limit: Int) throws
    func isKnownLoginAddress(userID: String, address: String, since: Int64) throws -> Bool
    func rememberLoginAddress(userID: String, address: String, now: Int64, forgetBefore: Int64) throws

    // Files
    func insertFile(id: String, metadata: FileMetadata, thumbnailJob: Bool, scope: AccessScope) throws -> String
    func deleteFile(id: String, scope: AccessScope) throws
    func recordThumbnail(id: String, name: String, state: ThumbnailState, sizes: [String]) throws -> Bool
    func allFileIDs() throws -> Set<String>
    func removeFileRows(_ ids: [String]) throws
    func pendingFileJobs(limit: Int) throws -> [FileJobRecord]
    /// Runs `body` in a transaction of its own (outside `commitBatch`).
    func transaction<T>(_ body: () throws -> T) throws -> T

    // Webhooks and push
    func hasSubscribers(_ type: String) throws -> Bool
    func enqueueEvent(type: String, data: String) throws -> String?
    func recordAttempt(rid: Int64, attempt: Int, status: Int?, error: String?, durationMilliseconds: Int, outcome: DeliveryOutcome) throws
    func requeueDelivery(rid: Int64) throws -> Bool
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    func saveWebhookEndpoint(_ e: WebhookEndpointRecord, keepDisabled: Bool) throws
    func syncConfigWebhookEndpoints(_ endpoints: [WebhookEndpointRecord]) throws
    func deleteWebhookEndpoint(name: String) throws -> Bool
    func setWebhookEndpointDisabled(name: String, reason: String?) throws -> Bool
    func registerDevice(token: String, userID: String, platform: String) throws -> Bool
    func unregisterDevice(token: String, userID: String?) throws -> Bool
    func devices(userIDs: [String]) throws -> [PushDevice]
    func deleteDevices(userID: String) throws
    func registerDevice(token: String, userID: String, platform: String, environment: String?, sync: Bool) throws -> Bool
    func enqueuePush(userID: String, kind: String, payload: String, collapseID: String?, audience: PushAudience) throws -> Int
    func recordPushAttempts(_ records: [PushAttemptRecord]) throws -> [(token: String, reason: String)]
    func expireStaleDevices(seenBefore cutoff: String) throws -> [String]
    func pruneFinishedPushes(alertsBefore: String, backgroundBefore: String, limit: Int) throws -> Int

    // The mail outbox
    func enqueueMail(recipient: String, kind: String, message: String, nowMilliseconds: Int64) throws
    func claimMail(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [MailJob]
    func nextMailDue() throws -> Int64?
    func recordMail(rid: Int64, attempt: Int, error: String?, outcome: MailOutcome) throws
    func mailCounts() throws -> (pending: Int, dead: Int)

    // Scheduled jobs' runs (`ScheduledRuns`)
    /// Creates their table; at start, outside `commitBatch`.
    func prepareScheduledRuns() throws
    /// Claims period `fire` of `job` for `node`; false when it ran already or another node holds it.
    func claimScheduledRun(job: String, fire: Int64, previous: Int64, node: String, now: Int64, leaseUntil: Int64) throws -> Bool
    /// Marks the claimed period as run.
    func finishScheduledRun(job: String, node: String) throws

    /// Reads (get, find, count) on this connection, inside the running
    /// transaction: they see its writes so far (scripts' before hooks).
    func readerInTransaction() throws -> any DocumentReading

    // Upkeep (SQLite's checkpoint and page cache; no-ops elsewhere)
    func checkpoint()
    func limitPageCache(bytes: Int) throws
}

extension DocumentWriting {
    public func insert(into collection: String, _ body: JSONObject) throws -> String {
        try insert(into: collection, body, scope: .system)
    }

    public func replace(in collection: String, id: String, _ body: JSONObject) throws -> (created: Bool, text: String) {
        try replace(in: collection, id: id, body, scope: .system)
    }

    public func patch(in collection: String, id: String, _ patch: JSONObject) throws -> String {
        try self.patch(in: collection, id: id, patch, scope: .system)
    }

    public func delete(from collection: String, id: String) throws {
        try delete(from: collection, id: id, scope: .system)
    }

    public func pruneLoginCounters(windowStartBefore: Int64, now: Int64) throws {
        try pruneLoginCounters(windowStartBefore: windowStartBefore, now: now, limit: 20)
    }
}
