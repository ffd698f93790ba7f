import Foundation

/// An offline-first local mirror of chosen collections, in its own SQLite file.
///
/// - Reads (``OfflineCollection/find(_:)``, ``OfflineCollection/get(_:)``) come
///   from the local copy and never wait for the network.
/// - Writes change the local copy at once and go, in the same local
///   transaction, into a durable outbox. ``sync()`` sends them in order, each
///   conditional on the version the local copy had (`If-Match`); a refusal
///   because the document changed goes to the ``ConflictResolver`` (by
///   default the server's copy wins and the local one is kept in
///   ``conflicts()``). The outbox survives the app being killed.
/// - ``sync()`` then pulls each mirror's changes with the server's delta sync
///   (`GET /:collection/_deltaset`), applying each page's changes and deletes in
///   one local transaction; after `CursorExpired` it resyncs from scratch.
///   Documents with queued writes keep their local copy until those are sent.
///
/// Use one store file per signed-in user.
///
/// ```swift
/// let store = try OfflineStore(client: roost, url: dir.appendingPathComponent("alice.sqlite"),
///                              mirrors: [Mirror("messages"), Mirror("locations")])
/// let messages = await store.collection("messages", of: Message.self)
/// try await messages.create(Message(recipientId: bob, text: "hi"))   // works offline
/// try await store.sync()                                            // when online
/// ```
public actor OfflineStore {
    /// The client the store syncs through.
    public nonisolated let client: RoostClient
    /// The collections mirrored, by name.
    public nonisolated let mirrors: [String: Mirror]
    let db: SQLiteDatabase
    var resolver: ConflictResolver = { _ in .keepServer }
    /// How many times the server may fail one write (5xx) before it moves to the dead-letter list.
    public private(set) var maxAttempts = 5
    var running: Task<SyncReport, Error>?
    /// Documents parsed by local reads so far (how tests see that an index narrowed a query).
    var documentsRead = 0
    /// Observers of local changes (``OfflineCollection/results(_:)``), each with its collection.
    var observers: [UUID: (collection: String, signal: AsyncStream<Void>.Continuation)] = [:]

    /// Opens (or creates) the store at `url`.
    ///
    /// - Parameters:
    ///   - client: the server connection, signed in for non-public collections.
    ///   - url: the SQLite file (created with its directory if missing).
    ///   - mirrors: the collections to keep locally.
    public init(client: RoostClient, url: URL, mirrors: [Mirror]) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        self.client = client
        self.mirrors = Dictionary(mirrors.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        db = try SQLiteDatabase(path: url.path)
        try Self.migrate(db)
        try Self.prepareIndexes(db, self.mirrors)
    }

    /// The schema version this RoostKit writes (`PRAGMA user_version`).
    public static var schemaVersion: Int { migrations.count }

    /// Migration `n` takes a store from version `n` to `n + 1`, in one
    /// transaction with the new version number. Append only: never edit one.
    static let migrations: [[String]] = [
        // 1: the tables of RoostKit 0.2.0 (which wrote no version; IF NOT EXISTS adopts its files).
        [
            """
            CREATE TABLE IF NOT EXISTS entities (collection TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL,
                PRIMARY KEY (collection, id)) WITHOUT ROWID
            """,
            """
            CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, id TEXT NOT NULL,
                op TEXT NOT NULL, body BLOB, if_match TEXT, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT)
            """,
            "CREATE INDEX IF NOT EXISTS outbox_entity ON outbox (collection, id)",
            "CREATE TABLE IF NOT EXISTS sync_state (collection TEXT PRIMARY KEY, filter TEXT NOT NULL, cursor TEXT)",
            """
            CREATE TABLE IF NOT EXISTS conflicts (seq INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, id TEXT NOT NULL,
                op TEXT NOT NULL, local BLOB, server BLOB, reason TEXT NOT NULL, at TEXT NOT NULL)
            """,
        ],
        // 2: conflicts counted apart from failed tries (attempts now counts only server
        // refusals, not network failures), and the dead-letter list.
        [
            "ALTER TABLE outbox ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0",
            "UPDATE outbox SET attempts = 0",
            """
            CREATE TABLE dead_letters (seq INTEGER PRIMARY KEY AUTOINCREMENT, outbox_seq INTEGER NOT NULL,
                collection TEXT NOT NULL, id TEXT NOT NULL, op TEXT NOT NULL, body BLOB, if_match TEXT,
                attempts INTEGER NOT NULL, status INTEGER, error TEXT NOT NULL, at TEXT NOT NULL)
            """,
        ],
        // 3: the last live event applied per stream, so a relaunch resumes without a resync.
        [
            "CREATE TABLE live_state (stream TEXT PRIMARY KEY, last_event_id TEXT NOT NULL)",
        ],
        // 4: local indexes (``Mirror/indexes``): the scalar values at each declared path.
        [
            "CREATE TABLE local_indexes (collection TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (collection, path))",
            "CREATE TABLE entity_values (collection TEXT NOT NULL, id TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL, num REAL, text TEXT)",
            "CREATE INDEX entity_values_num ON entity_values (collection, path, kind, num)",
            "CREATE INDEX entity_values_text ON entity_values (collection, path, kind, text)",
            "CREATE INDEX entity_values_entity ON entity_values (collection, id)",
        ],
    ]

    /// Brings the file to ``schemaVersion``; a file from a newer RoostKit is refused untouched.
    static func migrate(_ db: SQLiteDatabase) throws {
        let version = Int(try db.query("PRAGMA user_version").first?[0].integer ?? 0)
        guard version <= migrations.count else {
            throw RoostError.localStore("the store has schema version \(version), written by a newer RoostKit (this one knows \(migrations.count))")
        }
        for step in version..<migrations.count {
            try db.transaction {
                for statement in migrations[step] { try db.execute(statement) }
                try db.execute("PRAGMA user_version = \(step + 1)")
            }
        }
    }

    /// The file's schema version (``schemaVersion`` once opened).
    public func schemaVersion() throws -> Int {
        Int(try db.query("PRAGMA user_version").first?[0].integer ?? 0)
    }

    /// Sets how many times the server may fail one write before it moves to ``deadLetters()`` (at least 1).
    public func setMaxAttempts(_ attempts: Int) { maxAttempts = max(1, attempts) }

    /// Sets the conflict resolver (the default keeps the server's copy).
    public func setConflictResolver(_ resolver: @escaping ConflictResolver) { self.resolver = resolver }

    /// A typed view of a mirrored collection.
    public nonisolated func collection<Model: Codable & Sendable>(_ name: String, of type: Model.Type = Model.self) -> OfflineCollection<Model> {
        OfflineCollection(store: self, name: name)
    }

    // MARK: - Local reads

    /// Every local copy in `collection` (with queued changes applied).
    func documents(_ collection: String) throws -> [JSONValue] {
        try parse(db.query("SELECT body FROM entities WHERE collection = ?", [.text(collection)]))
    }

    /// The bodies of `rows` (one column each), counted in ``documentsRead``; unparsable ones left out.
    func parse(_ rows: [[SQLiteValue]]) -> [JSONValue] {
        documentsRead += rows.count
        return rows.compactMap { row in row[0].data.flatMap { try? JSONValue.parse($0) } }
    }

    /// The local copy of one document.
    func document(_ collection: String, _ id: String) throws -> JSONValue? {
        try db.query("SELECT body FROM entities WHERE collection = ? AND id = ?", [.text(collection), .text(id)])
            .first?[0].data.flatMap { try? JSONValue.parse($0) }
    }

    /// The local documents matching `query`, filtered, sorted and paged here.
    func find(_ collection: String, _ query: Query) throws -> [JSONValue] {
        let filter = query.filter?.document ?? [:]
        let matcher = LocalMatcher(filter: filter)
        var rows = try (candidates(collection, filter) ?? documents(collection)).filter { try matcher.matches($0) }
        if query.sort.isEmpty, let (path, operand) = GeoMath.nearClause(filter) {
            let parts = path.split(separator: ".").map(String.init)[...]
            func d(_ v: JSONValue) -> Double { (try? GeoMath.near(operand, LocalMatcher.resolve(v, parts))) ?? .infinity }
            rows.sort { d($0) < d($1) }
        } else {
            let keys = query.sort.isEmpty ? [Query.SortKey(path: "_id", ascending: true)] : query.sort
            rows.sort { a, b in
                for key in keys {
                    let parts = key.path.split(separator: ".").map(String.init)[...]
                    let order = LocalMatcher.compareForSort(LocalMatcher.resolve(a, parts).first ?? nil,
                                                            LocalMatcher.resolve(b, parts).first ?? nil)
                    if order != .orderedSame { return (order == .orderedAscending) == key.ascending }
                }
                return false
            }
        }
        let start = min(query.skip ?? 0, rows.count)
        let end = query.limit.map { min(start + $0, rows.count) } ?? rows.count
        return Array(rows[start..<end])
    }

    /// ``find(_:_:)`` and the collection's ids with queued writes, read in one step of the actor.
    func findWithPending(_ collection: String, _ query: Query) throws -> ([JSONValue], Set<String>) {
        (try find(collection, query), try pendingIDs(collection))
    }

    // MARK: - Local writes (each with its outbox row, in one transaction)

    /// A new id for a document made offline: `<user id>:<UUID>` when signed in
    /// (what private collections require; harmless elsewhere), else a UUID.
    nonisolated func newID() -> String {
        let uuid = UUID().uuidString.lowercased()
        return client.userID.map { "\($0):\(uuid)" } ?? uuid
    }

    func write(_ collection: String, _ id: String, _ operation: PendingWrite.Operation, body: JSONValue?, newLocal: JSONValue?) throws {
        try db.transaction {
            let current = try document(collection, id)
            let base = current?["_updatedAt"]?.stringValue.map { "\"\($0)\"" }
            if let newLocal {
                try store(collection, id, newLocal)
            } else {
                try remove(collection, id)
            }
            try db.execute("INSERT INTO outbox (collection, id, op, body, if_match) VALUES (?, ?, ?, ?, ?)",
                           [.text(collection), .text(id), .text(operation.rawValue),
                            try body.map { .blob(try $0.jsonData()) } ?? .null, SQLiteValue(operation == .create ? nil : base)])
        }
        changed(collection)
    }

    /// Applies a merge patch to the local copy and queues it, in one step of the actor.
    func patch(_ collection: String, _ id: String, _ patch: JSONValue) throws -> JSONValue {
        guard let current = try document(collection, id) else {
            throw RoostError.server(ServerError(status: 404, code: .notFound, message: "No local copy of \(collection)/\(id)."))
        }
        let local = current.merging(patch: patch)
        try write(collection, id, .patch, body: patch, newLocal: local)
        return local
    }

    // MARK: - Outbox and conflicts

    /// The writes waiting to be sent, oldest first.
    public func pendingWrites() throws -> [PendingWrite] {
        try db.query("SELECT seq, collection, id, op, body, if_match FROM outbox ORDER BY seq").map(Self.pending)
    }

    static func pending(_ row: [SQLiteValue]) -> PendingWrite {
        PendingWrite(sequence: row[0].integer ?? 0, collection: row[1].text ?? "", id: row[2].text ?? "",
                     operation: PendingWrite.Operation(rawValue: row[3].text ?? "") ?? .replace,
                     body: row[4].data.flatMap { try? JSONValue.parse($0) }, ifMatch: row[5].text)
    }

    /// Conflicts kept for the app to show, oldest first.
    public func conflicts() throws -> [RecordedConflict] {
        try db.query("SELECT seq, collection, id, op, local, server, reason FROM conflicts ORDER BY seq").map { row in
            RecordedConflict(sequence: row[0].integer ?? 0,
                             conflict: Conflict(collection: row[1].text ?? "", id: row[2].text ?? "",
                                                operation: PendingWrite.Operation(rawValue: row[3].text ?? "") ?? .replace,
                                                local: row[4].data.flatMap { try? JSONValue.parse($0) },
                                                server: row[5].data.flatMap { try? JSONValue.parse($0) }),
                             reason: row[6].text ?? "")
        }
    }

    /// Forgets a recorded conflict once the app has shown or handled it.
    public func dismissConflict(_ sequence: Int64) throws {
        try db.execute("DELETE FROM conflicts WHERE seq = ?", [.integer(sequence)])
    }

    /// Writes the server would not take, oldest first.
    public func deadLetters() throws -> [DeadLetter] {
        try db.query("SELECT seq, collection, id, op, body, if_match, status, error, attempts FROM dead_letters ORDER BY seq").map { row in
            DeadLetter(sequence: row[0].integer ?? 0, write: Self.pending(Array(row[0...5])),
                       status: row[6].integer.map(Int.init), error: row[7].text ?? "", attempts: Int(row[8].integer ?? 0))
        }
    }

    /// Queues a dead letter again (at the end of the outbox, with the version it
    /// was written against, so a changed document meets the resolver) and applies it to the local copy.
    public func retryDeadLetter(_ sequence: Int64) throws {
        try db.transaction {
            guard let letter = try deadLetters().first(where: { $0.sequence == sequence }) else { return }
            let w = letter.write
            try db.execute("INSERT INTO outbox (collection, id, op, body, if_match) VALUES (?, ?, ?, ?, ?)",
                           [.text(w.collection), .text(w.id), .text(w.operation.rawValue),
                            try w.body.map { .blob(try $0.jsonData()) } ?? .null, SQLiteValue(w.ifMatch)])
            try storeOrRemove(w.collection, w.id, Self.replay([w], on: try document(w.collection, w.id)))
            try db.execute("DELETE FROM dead_letters WHERE seq = ?", [.integer(sequence)])
        }
    }

    /// Forgets a dead letter (the edit is given up).
    public func discardDeadLetter(_ sequence: Int64) throws {
        try db.execute("DELETE FROM dead_letters WHERE seq = ?", [.integer(sequence)])
    }

    /// Whether `id` has writes not yet sent (its local copy differs from the server's).
    public func hasPendingWrites(_ collection: String, _ id: String) throws -> Bool { try hasPending(collection, id) }

    func hasPending(_ collection: String, _ id: String) throws -> Bool {
        !(try db.query("SELECT 1 FROM outbox WHERE collection = ? AND id = ? LIMIT 1", [.text(collection), .text(id)]).isEmpty)
    }
}

/// A collection the ``OfflineStore`` keeps locally, optionally only the
/// documents matching a filter.
public struct Mirror: Sendable, Hashable {
    /// The collection.
    public let name: String
    /// Only documents matching this are mirrored (all visible ones when nil).
    public let filter: Filter?

    /// Paths (dotted) the local store indexes, such as the fields the app
    /// filters on: a local query with an equality, `$in` or a numeric range on
    /// one of them reads only the matching documents, not the whole collection.
    public let indexes: [String]

    /// Mirrors `name`, all of it or only what matches `filter`, indexing `indexes` locally.
    public init(_ name: String, filter: Filter? = nil, indexes: [String] = []) {
        self.name = name
        self.filter = filter
        self.indexes = indexes
    }
}
