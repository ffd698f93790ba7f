import JSON

/// What the API's reader threads ask of the store, whichever engine holds it
/// (`DocumentReader` on SQLite, `PostgresDocumentReader` on PostgreSQL).
/// One value per reader thread, confined to it. Every method keeps access
/// rules inside the engine's SQL, and both engines give the same answers and
/// errors (docs/ENGINES.md).
public protocol DocumentReading: SessionLookup {
    /// The longest a list or count may run before it is stopped.
    var timeLimit: Double { get set }

    // Documents
    func get(_ collection: String, id: String, scope: AccessScope, redaction: Redaction?) throws -> String?
    func find(_ collection: String, _ query: FindQuery, scope: AccessScope, redaction: Redaction?) throws -> [String]
    func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope, redaction: Redaction?) throws -> ListPage
    func count(_ collection: String, filter: JSONValue, scope: AccessScope) throws -> Int
    func explain(_ collection: String, _ query: FindQuery, scope: AccessScope) throws -> JSONValue
    func plan(_ collection: String, filter: JSONValue) throws -> [String]

    // Change feed, delta sync, live streams
    func cursorSeal() throws -> CursorSeal
    func delta(_ collection: String, since: FeedCursor?, filter: JSONValue, limit: Int, scope: AccessScope, redaction: Redaction?) throws -> DeltaPage
    func feedMeta() throws -> (epoch: String, horizon: Int64)
    func feedHead() throws -> Int64
    func changes(after seq: Int64, limit: Int) throws -> (changes: [FeedChange], head: Int64)
    func probe(_ filter: JSONValue) throws -> FilterProbe

    // Accounts
    func credentials(username: String) throws -> CredentialRecord?
    func credentials(userID: String) throws -> CredentialRecord?
    func sessions(userID: String, now: Int64) throws -> [SessionSummary]
    func identities(userID: String) throws -> [IdentityRecord]
    func credentials(email: String) throws -> CredentialRecord?

    // Files
    func file(id: String, scope: AccessScope) throws -> String?
    func fileForServing(id: String, scope: AccessScope) throws -> StoredFileInfo?
    func pendingFileJobs(limit: Int) throws -> [FileJobRecord]
    func filePage(limit: Int, skip: Int) throws -> (documents: [String], total: Int)
    /// `creator`'s own file metadata, newest first: `limit` after the file `after`
    /// (the last `_id` of the previous page; a file not theirs gives an empty page).
    func ownFiles(creator: String, limit: Int, after: String?) throws -> [String]

    // Webhooks and push
    func dueDeliveries(now: Int64, limit: Int) throws -> [DueDelivery]
    func nextDeliveryDue() throws -> Int64?
    func deliveries(status: String?, limit: Int) throws -> [JSONObject]
    func delivery(rid: Int64) throws -> JSONObject?
    func pendingDeliveryCount() throws -> Int
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    func devices(userIDs: [String]) throws -> [PushDevice]
    func duePushes(now: Int64, limit: Int) throws -> [DuePush]
    func syncDevices(limit: Int) throws -> [PushDevice]
    func nextPushDue() throws -> Int64?
    func pushDeviceReports(limit: Int) throws -> [PushDeviceReport]
    func pushDeliveries(status: String?, limit: Int) throws -> [JSONObject]
    func pushDelivery(rid: Int64) throws -> JSONObject?

    // Admin
    func collectionSummaries() throws -> [(name: String, count: Int)]
    func collectionDetails() throws -> [CollectionDetail]
    func danglingReferences(_ schema: ReferenceSchema) throws -> [DanglingReference]

    // Memory (SQLite's page cache and map; a no-op on engines without them)
    func limitPageCache(bytes: Int) throws
    func mapFile(bytes: Int) throws
}

/// Where a session token is looked up: a reader, or the writer inside its transaction.
public protocol SessionLookup: AnyObject {
    func session(tokenHash: String, now: Int64) throws -> SessionRecord?
}

extension DocumentReading {
    public func get(_ collection: String, id: String, scope: AccessScope = .system) throws -> String? {
        try get(collection, id: id, scope: scope, redaction: nil)
    }

    public func find(_ collection: String, _ query: FindQuery, scope: AccessScope = .system) throws -> [String] {
        try find(collection, query, scope: scope, redaction: nil)
    }

    public func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope = .system) throws -> ListPage {
        try page(collection, query, withTotal: withTotal, scope: scope, redaction: nil)
    }

    public func count(_ collection: String, filter: JSONValue) throws -> Int {
        try count(collection, filter: filter, scope: .system)
    }

    public func delta(_ collection: String, since: FeedCursor?, filter: JSONValue, limit: Int, scope: AccessScope) throws -> DeltaPage {
        try delta(collection, since: since, filter: filter, limit: limit, scope: scope, redaction: nil)
    }
}
