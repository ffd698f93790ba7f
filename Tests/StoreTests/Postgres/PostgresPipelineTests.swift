import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// Deferred statements (BEGIN, SAVEPOINT, RELEASE, `runDeferred`) travel
/// with the next statement that needs a result: these batches check that
/// every outcome and error is what one-statement-at-a-time gave.
@Suite("PostgreSQL engine: pipelined batches")
struct PostgresPipelineTests {
    typealias Operation = @Sendable (PostgresDocumentWriter) throws -> String

    static func insert(_ id: String) -> Operation { { w in try w.insert(into: "c", object(#"{"_id":"\#(id)"}"#)) } }

    /// A batch, the ids that must commit, and whether each operation succeeds.
    struct Case: CustomStringConvertible, Sendable {
        let description: String
        let operations: [Operation]
        let succeeds: [Bool]
        let committed: Set<String>
    }

    static let cases: [Case] = [
        Case(description: "a failing statement after a deferred SAVEPOINT rolls back only its operation",
             operations: [insert("a"), { w in
                 _ = try insert("b")(w)
                 try w.db.run("SELECT 1 / 0")
                 return ""
             }, insert("c")],
             succeeds: [true, false, true], committed: ["warm", "a", "c"]),
        Case(description: "a taken _id fails its operation alone; the others commit",
             operations: [insert("a"), insert("warm"), insert("c")],
             succeeds: [true, false, true], committed: ["warm", "a", "c"]),
        Case(description: "an operation that throws before any statement leaves the others alone",
             operations: [insert("a"), { _ in throw StoreError.invalid("refused before SQL") }, insert("c")],
             succeeds: [true, false, true], committed: ["warm", "a", "c"]),
        Case(description: "an operation that fails after a deferred ROLLBACK TO of the one before it",
             operations: [insert("warm"), insert("warm"), insert("a")],
             succeeds: [false, false, true], committed: ["warm", "a"]),
        Case(description: "a lone operation that throws before any statement",
             operations: [{ _ in throw StoreError.invalid("refused before SQL") }],
             succeeds: [false], committed: ["warm"]),
        Case(description: "a deferred statement failing at the batch's end fails the batch",
             operations: [insert("a"), { w in
                 w.db.runDeferred("SELECT 1 / 0")
                 return ""
             }],
             succeeds: [false, false], committed: ["warm"]),
        Case(description: "a connection terminated mid-pipeline fails the whole batch",
             operations: [insert("a"), { w in
                 w.db.runDeferred("SELECT pg_terminate_backend(pg_backend_pid())")
                 return try insert("b")(w)
             }, insert("c")],
             succeeds: [false, false, false], committed: ["warm"]),
        // Held creates (`PostgresDocumentWriter+HeldInserts`): outcomes as if each had been sent at once.
        Case(description: "two creates of one _id in a batch: the first wins, the second alone fails",
             operations: [insert("a"), insert("a"), insert("c")],
             succeeds: [true, false, true], committed: ["warm", "a", "c"]),
        Case(description: "a later operation reads a create held by an earlier one",
             operations: [insert("a"), { w in
                 guard try w.document(in: "c", id: "a") != nil else { throw StoreError.invalid("the held create was not seen") }
                 return ""
             }],
             succeeds: [true, true], committed: ["warm", "a"]),
        Case(description: "a later operation's sent create of a held _id fails it, not the held one",
             operations: [insert("a"), { w in
                 try w.db.run("SELECT 1")
                 return try insert("a")(w)
             }],
             succeeds: [true, false], committed: ["warm", "a"]),
        Case(description: "an operation holding a taken _id that goes on to a statement fails, its other writes undone",
             operations: [insert("x"), { w in
                 _ = try insert("warm")(w)
                 return try insert("b")(w)
             }, insert("c")],
             succeeds: [true, false, true], committed: ["warm", "x", "c"]),
        Case(description: "a held create stays when a nested savepoint after it rolls back",
             operations: [{ w in
                 _ = try insert("a")(w)
                 _ = try? w.db.transaction { try w.db.run("SELECT 1 / 0") }
                 return ""
             }, insert("b")],
             succeeds: [true, true], committed: ["warm", "a", "b"]),
        Case(description: "an operation that throws after holding its create leaves nothing, the others commit",
             operations: [insert("a"), { w in
                 _ = try insert("b")(w)
                 throw StoreError.invalid("refused after the create")
             }, insert("c")],
             succeeds: [true, false, true], committed: ["warm", "a", "c"]),
        Case(description: "held creates of finished operations survive a later operation's failed statement",
             operations: [insert("a"), insert("b"), { w in
                 try w.db.run("SELECT 1 / 0")
                 return ""
             }, insert("c")],
             succeeds: [true, true, false, true], committed: ["warm", "a", "b", "c"]),
    ]

    @Test("batches keep each operation's outcome", arguments: cases)
    func batch(_ c: Case) throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        let results = store.writer.commitBatch(c.operations.map { operation in { w in try operation(w) } })
        #expect(results.map { (try? $0.get()) != nil } == c.succeeds, "\(results)")
        #expect(try store.idSet("c", json("{}")) == c.committed)
        let feed = try store.reader.changes(after: 0, limit: 10).changes.map(\.id)
        #expect(Set(feed) == c.committed && feed.count == c.committed.count, "one change row per committed write: \(feed)")
        // The writer goes on: the next batch commits, on a reset connection if needed.
        try store.insert("c", [#"{"_id":"next"}"#])
        #expect(try store.idSet("c", json("{}")) == c.committed.union(["next"]))
    }

    /// A string no compression shortens below PostgreSQL's B-tree entry limit (about 2,700 bytes).
    static let tooLargeForAnIndex = (0..<1500).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()

    @Test("a held create refused by an index fails its own operation alone, with the error sending it at once gave",
          arguments: [false, true])
    func heldRowRefused(sendsAStatementAfter: Bool) throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        try store.writer.applyIndexes([IndexSpec(path: "big", kind: .value)], on: "c")
        let results = store.writer.commitBatch([Self.insert("a"), { w in
            let text = try w.insert(into: "c", object(#"{"_id":"huge","big":"\#(Self.tooLargeForAnIndex)"}"#))
            if sendsAStatementAfter { try w.db.run("SELECT 1") }  // what a hook after the write may do
            return text
        }, Self.insert("c")])
        #expect(results.map { (try? $0.get()) != nil } == [true, false, true], "\(results)")
        if case .failure(let error) = results[1] {
            guard case StoreError.invalid(let message) = error else { Issue.record("expected the index's refusal, got \(error)"); return }
            #expect(message.contains("too large"), "\(message)")
        }
        #expect(try store.idSet("c", json("{}")) == ["warm", "a", "c"])
        #expect(Set(try store.reader.changes(after: 0, limit: 10).changes.map(\.id)) == ["warm", "a", "c"])
    }

    @Test("held creates: ids equal in Unicode but not in bytes are two ids; a refused row frees its id for a later create")
    func heldIDsAreBytes() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        try store.writer.applyIndexes([IndexSpec(path: "big", kind: .value)], on: "c")
        let results = store.writer.commitBatch([Self.insert("caf\u{E9}"), Self.insert("cafe\u{301}"), { w in
            try w.insert(into: "c", object(#"{"_id":"a","big":"\#(Self.tooLargeForAnIndex)"}"#))
        }, Self.insert("a")])
        #expect(results.map { (try? $0.get()) != nil } == [true, true, false, true], "\(results)")
        let rows = try store.writer.db.first("SELECT count(*) FROM c_1 WHERE id IN ($1::text, $2::text, 'a')",
                                              [.text("caf\u{E9}"), .text("cafe\u{301}")]) { $0.int(0) }
        #expect(rows == 3)
    }

    @Test("a held create's refusal is its operation's outcome, whatever the operation did after; settling throws it once")
    func heldRefusalWins() throws {
        struct Wrapped: Error { let inner: any Error }
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        // After a failed operation the next one looks its collection up again (a statement: it holds nothing),
        // so each failing case here follows a plain create that holds.
        let results = store.writer.commitBatch([Self.insert("a"), { w in
            _ = try Self.insert("warm")(w)
            do { try w.settleHeldWrite() } catch { throw Wrapped(inner: error) }
            return ""
        }, Self.insert("e"), Self.insert("f"), { w in
            _ = try Self.insert("warm")(w)
            try w.db.run("SELECT 1")
            throw StoreError.invalid("a later step refused")
        }, Self.insert("g"), { w in
            _ = try Self.insert("b")(w)
            try w.settleHeldWrite()
            return try Self.insert("d")(w)
        }])
        guard results.count == 7 else { Issue.record("\(results)"); return }
        #expect(results.map { (try? $0.get()) != nil } == [true, false, true, true, false, true, true], "\(results)")
        guard case .failure(let wrapped as Wrapped) = results[1], case StoreError.conflict = wrapped.inner else {
            Issue.record("expected the operation's own wrapping of the refusal, got \(results[1])"); return
        }
        guard case .failure(StoreError.conflict) = results[4] else { Issue.record("expected the taken id, got \(results[4])"); return }
        #expect(try store.idSet("c", json("{}")) == ["warm", "a", "e", "f", "g", "b", "d"])
    }

    @Test("held creates of many batch sizes leave the prepared-statement cache alone")
    func heldInsertsAreNotPrepared() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        let before = store.writer.db.statements.count
        for n in 1...40 {
            for result in store.writer.commitBatch((0..<n).map { Self.insert("s\(n)-\($0)") }) { _ = try result.get() }
        }
        #expect(store.writer.db.statements.count - before <= 3, "\(store.writer.db.statements.keys)")
        #expect(try store.idSet("c", json("{}")).count == 1 + (1...40).reduce(0, +))
    }

    @Test("a COMMIT that fails fails every operation of the batch, and nothing of it is kept")
    func commitFails() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        try store.writer.db.execute("CREATE TABLE pipe_deferred (x integer UNIQUE DEFERRABLE INITIALLY DEFERRED)")
        let results = store.writer.commitBatch([Self.insert("a"), { w in
            try w.db.run("INSERT INTO pipe_deferred VALUES (1), (1)")
            return ""
        }])
        for result in results {
            guard case .failure(let error as PGError) = result else { Issue.record("expected the COMMIT's error, got \(result)"); continue }
            #expect(error.isUniqueViolation, "\(error)")
        }
        #expect(try store.idSet("c", json("{}")) == ["warm"])
        #expect(try store.reader.changes(after: 0, limit: 10).changes.map(\.id) == ["warm"])
        try store.insert("c", [#"{"_id":"next"}"#])
        #expect(try store.idSet("c", json("{}")) == ["warm", "next"])
    }

    @Test("a batch of N creates costs 2 exchanges with the server (rows, then feed and COMMIT), one op that throws first costs none")
    func roundTripsPerBatch() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])  // the collection and its statements are known
        for n in [1, 5, 20] {
            let before = store.writer.db.roundTrips
            let results = store.writer.commitBatch((0..<n).map { Self.insert("n\(n)-\($0)") })
            for result in results { _ = try result.get() }
            #expect(store.writer.db.roundTrips - before == 2, "a batch of \(n)")
            #expect(try store.idSet("c", json("{}")).isSuperset(of: (0..<n).map { "n\(n)-\($0)" }))
        }
        let before = store.writer.db.roundTrips
        _ = store.writer.commitBatch([{ (_: PostgresDocumentWriter) throws -> String in throw StoreError.invalid("no") }])
        #expect(store.writer.db.roundTrips == before, "nothing was sent: no BEGIN, no ROLLBACK")
    }

    @Test("hasSubscribers is asked once per batch and type, and sees endpoints changed in the batch or committed before it")
    func subscriberCache() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        let endpoint = WebhookEndpointRecord(name: "e", url: "http://127.0.0.1:9/", secret: "whsec_x", events: ["c.created"],
                                             format: "standard", source: "admin")
        let asking: Operation = { w in String(try w.hasSubscribers("c.created")) }
        let before = store.writer.db.roundTrips
        let none = store.writer.commitBatch([asking, asking, asking])
        #expect(none.map { try? $0.get() } == ["false", "false", "false"])
        #expect(store.writer.db.roundTrips - before == 2, "one question (with BEGIN) and COMMIT")
        // Another node (its own writer) adds the endpoint: the next batch sees it.
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: .init(label: "other"))
        _ = try other.commitBatch([{ w in try w.saveWebhookEndpoint(endpoint, keepDisabled: false) }])[0].get()
        #expect(store.writer.commitBatch([asking]).map { try? $0.get() } == ["true"])
        // Changed inside the batch: the answer after the change is fresh.
        let inBatch = store.writer.commitBatch([asking, { w in
            _ = try w.setWebhookEndpointDisabled(name: "e", reason: "test")
            return ""
        }, asking])
        #expect(inBatch.map { try? $0.get() } == ["true", "", "false"])
        // An operation that changed endpoints and failed leaves no stale answer behind.
        let undone = store.writer.commitBatch([{ w in
            _ = try w.setWebhookEndpointDisabled(name: "e", reason: nil)
            _ = try w.hasSubscribers("c.created")
            throw StoreError.invalid("undo")
        }, asking])
        #expect((try? undone[1].get()) == "false")
    }

    @Test("a snapshot sends BEGIN and its time limit with its first statement, and the limit holds there")
    func readerSnapshot() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"a"}"#])
        store.reader.timeLimit = 7
        let before = store.reader.db.roundTrips
        let limit = try store.reader.snapshot { try store.reader.db.first("SELECT current_setting('statement_timeout')") { $0.text(0) } }
        #expect(limit == "7s")
        #expect(store.reader.db.roundTrips - before == 1, "one exchange for BEGIN, the limit and the statement; COMMIT not waited for")
        // Both settings were local to the snapshot: the next statement runs after its COMMIT.
        #expect(try store.reader.db.first("SELECT current_setting('statement_timeout')") { $0.text(0) } == "0")
        #expect(try store.reader.db.first("SELECT current_setting('transaction_isolation')") { $0.text(0) } == "read committed")
    }

    @Test("a connection lost after a COMMIT that was not waited for is reset before the next read")
    func lostAfterSnapshot() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"a"}"#])
        let page = try store.reader.page("c", FindQuery(filter: json("{}"), limit: 10), withTotal: true)
        #expect(page.total == 1)
        let admin = try PGConnection(url: store.url)
        let pid = try #require(try store.reader.db.first("SELECT pg_backend_pid()") { $0.int(0) })
        _ = try store.reader.page("c", FindQuery(filter: json("{}"), limit: 10), withTotal: true)
        try admin.run("SELECT pg_terminate_backend($1::integer)", [.int(pid ?? 0)])
        // The first read may fail (retryable) or find the loss while reading the COMMIT's answer and reconnect.
        do { _ = try store.reader.get("c", id: "a") } catch let error as PGError { #expect(error.isRetryable, "\(error)") }
        #expect(try store.reader.page("c", FindQuery(filter: json("{}"), limit: 10), withTotal: true).total == 1)
    }

    @Test("deferred statements' errors surface at the next statement; the connection stays usable")
    func deferredErrors() throws {
        let store = try PGTestStore()
        let db = try PGConnection(url: store.url)
        db.runDeferred("SELECT 1 / 0")
        let failed = #expect(throws: PGError.self) { try db.first("SELECT 1") { $0.int(0) } }
        #expect(failed?.sqlState == "22012")
        #expect(try db.first("SELECT 2") { $0.int(0) } == 2)
        // Outside a transaction a lost connection is reset before the next statement.
        db.runDeferred("SELECT pg_terminate_backend(pg_backend_pid())")
        let lost = #expect(throws: PGError.self) { try db.first("SELECT 3") { $0.int(0) } }
        #expect(lost?.isRetryable == true, "\(String(describing: lost))")
        #expect(try db.first("SELECT 4") { $0.int(0) } == 4)
    }

    @Test("the prepared-statement cache stays bounded when statements are prepared inside pipelines")
    func cacheBound() throws {
        let store = try PGTestStore()
        let db = try PGConnection(url: store.url)
        for i in 0..<(PGConnection.cacheLimit + 40) {
            db.runDeferred("SELECT 0")
            #expect(try db.first("SELECT \(i)::integer") { $0.int(0) } == Int64(i))
        }
        #expect(db.statements.count <= PGConnection.cacheLimit)
        let server = try db.first("SELECT count(*) FROM pg_prepared_statements") { $0.int(0) ?? 0 } ?? 0
        #expect(server <= Int64(PGConnection.cacheLimit) + 1, "the server holds no more than the cache names")
    }
}
