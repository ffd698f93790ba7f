import Foundation
import Testing
@testable import RoostKit

/// The local store on its own (no server): its schema version and migrations,
/// and documents that no longer decode.
@Suite("Local store") struct LocalStoreTests {
    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roostkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("store.sqlite")
    }

    /// A client that never reaches a server (these tests only read and write locally).
    static let client = RoostClient(baseURL: URL(string: "http://127.0.0.1:9")!)

    /// The schema RoostKit 0.2.0 wrote (no version), with one queued write in it.
    static func makeVersion0Store(at url: URL) throws {
        let db = try SQLiteDatabase(path: url.path)
        for statement in [
            "CREATE TABLE entities (collection TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID",
            """
            CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, id TEXT NOT NULL,
                op TEXT NOT NULL, body BLOB, if_match TEXT, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT)
            """,
            "CREATE INDEX outbox_entity ON outbox (collection, id)",
            "CREATE TABLE sync_state (collection TEXT PRIMARY KEY, filter TEXT NOT NULL, cursor TEXT)",
            """
            CREATE TABLE conflicts (seq INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, id TEXT NOT NULL,
                op TEXT NOT NULL, local BLOB, server BLOB, reason TEXT NOT NULL, at TEXT NOT NULL)
            """,
        ] { try db.execute(statement) }
        let body = Data(#"{"_id":"n1","title":"from 0.2.0"}"#.utf8)
        try db.execute("INSERT INTO entities (collection, id, body) VALUES ('notes', 'n1', ?)", [.blob(body)])
        try db.execute("INSERT INTO outbox (collection, id, op, body, attempts) VALUES ('notes', 'n1', 'create', ?, 7)", [.blob(body)])
    }

    @Test("a store from an older version is migrated in place, its outbox kept")
    func migratesOldStore() async throws {
        let url = try Self.scratch()
        try Self.makeVersion0Store(at: url)
        let store = try OfflineStore(client: Self.client, url: url, mirrors: [Mirror("notes")])
        #expect(try await store.schemaVersion() == OfflineStore.schemaVersion)
        let pending = try await store.pendingWrites()
        #expect(pending.map(\.id) == ["n1"])
        #expect(pending.first?.operation == .create)
        #expect(try await store.collection("notes", of: Note.self).get("n1")?.value.title == "from 0.2.0")
        #expect(try await store.deadLetters().isEmpty)
        // Opening it again changes nothing.
        let again = try OfflineStore(client: Self.client, url: url, mirrors: [Mirror("notes")])
        #expect(try await again.pendingWrites() == pending)
    }

    @Test("a store written by a newer RoostKit is refused, not damaged")
    func refusesNewerStore() throws {
        let url = try Self.scratch()
        let db = try SQLiteDatabase(path: url.path)
        try db.execute("PRAGMA user_version = \(OfflineStore.schemaVersion + 1)")
        #expect(throws: RoostError.self) { try OfflineStore(client: Self.client, url: url, mirrors: []) }
        #expect(try db.query("PRAGMA user_version").first?[0].integer == Int64(OfflineStore.schemaVersion + 1))
    }

    @Test("a document that no longer decodes fails only itself")
    func undecodableDocument() async throws {
        let store = try OfflineStore(client: Self.client, url: try Self.scratch(), mirrors: [Mirror("notes")])
        let raw = store.collection("notes", of: JSONValue.self)
        _ = try await raw.create(["title": "good one"], id: "a")
        _ = try await raw.create(["title": 42], id: "b")   // an older app version's shape
        _ = try await raw.create(["title": "good two"], id: "c")
        let notes = store.collection("notes", of: Note.self)
        #expect(try await notes.find(Query().sorted(by: "_id")).map(\.id) == ["a", "c"])
        let result = try await notes.findReportingFailures(Query().sorted(by: "_id"))
        #expect(result.entities.map(\.id) == ["a", "c"])
        #expect(result.failures.map(\.id) == ["b"])
        await #expect(throws: RoostError.self) { try await notes.get("b") }
        #expect(try await notes.get("a")?.value.title == "good one")
    }

    @Test("query results follow local writes, pending writes marked")
    func resultsFollowLocalWrites() async throws {
        let store = try OfflineStore(client: Self.client, url: try Self.scratch(), mirrors: [Mirror("notes")])
        let notes = store.collection("notes", of: Note.self)
        var updates = notes.results(Query(Field("stars") >= 3).sorted(by: "title")).makeAsyncIterator()
        #expect(try await updates.next()?.entities.isEmpty == true)
        let good = try await notes.create(Note(title: "good", stars: 5))
        let next = try await updates.next()
        #expect(next?.entities.map(\.id) == [good.id])
        #expect(next?.hasPendingWrites(good.id) == true)
        try await notes.patch(good.id, ["stars": 1])
        #expect(try await updates.next()?.entities.isEmpty == true)
    }

    @Test("transport errors keep their URLError; cancellation and offline apart")
    func errorMapping() {
        #expect(RoostError.from(transport: CancellationError()) == .cancelled)
        #expect(RoostError.from(transport: URLError(.cancelled)) == .cancelled)
        let offline = RoostError.from(transport: URLError(.notConnectedToInternet))
        #expect(offline.isOffline && offline.urlError?.code == .notConnectedToInternet)
        let ats = RoostError.from(transport: URLError(.appTransportSecurityRequiresSecureConnection))
        #expect(!ats.isOffline && ats.errorDescription?.contains("App Transport Security") == true)
        #expect(RoostError.from(transport: RoostError.notSignedIn) == .notSignedIn)
    }

    @Test("the file token store replaces a saved session (a second save, a profile update)")
    func fileTokenStoreReplaces() throws {
        let url = try Self.scratch().deletingLastPathComponent().appendingPathComponent("session.json")
        let store = FileTokenStore(url: url)
        let user = try JSONDecoder().decode(RoostUser.self, from: Data(#"{"_id":"u1","username":"ada"}"#.utf8))
        try store.save(RoostSession(token: "first", expiresAt: "2030-01-01T00:00:00Z", user: user))
        try store.save(RoostSession(token: "second", expiresAt: "2030-01-01T00:00:00Z", user: user))
        #expect(try store.load()?.token == "second")
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).filter { $0.hasPrefix(".session") }.isEmpty)
        try store.clear()
        #expect(try store.load() == nil)
    }
}
