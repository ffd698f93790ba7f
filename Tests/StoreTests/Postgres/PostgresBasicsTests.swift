import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

@Suite("PostgreSQL engine: connection, writes, errors")
struct PostgresBasicsTests {
    @Test("a document is stored, read, replaced, patched and deleted with SQLite's texts and errors")
    func roundTrip() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"a","n":1,"s":"x"}"#])
        let text = try #require(try store.reader.get("c", id: "a"))
        let doc = object(text)
        #expect(doc["n"] == .int(1))
        #expect(text.hasPrefix(#"{"_id":"a","n":1,"s":"x","_acl":"#), "the text as written, key order kept: \(text)")
        // The same _id again: the conflict SQLite's path gives.
        let again = store.writer.commitBatch([{ w in try w.insert(into: "c", object(#"{"_id":"a"}"#)) }])
        guard case .failure(StoreError.conflict(let why)) = again[0] else { Issue.record("expected a conflict, got \(again[0])"); return }
        #expect(why.contains("already exists"))
        let replaced = store.writer.commitBatch([{ w in try w.replace(in: "c", id: "a", object(#"{"n":2}"#)) }])
        #expect(try replaced[0].get().created == false)
        let patched = store.writer.commitBatch([{ w in try w.patch(in: "c", id: "a", object(#"{"m":3}"#)) }])
        #expect(object(try patched[0].get())["n"] == .int(2))
        #expect(object(try #require(try store.reader.get("c", id: "a")))["m"] == .int(3))
        _ = try store.writer.commitBatch([{ w in try w.delete(from: "c", id: "a") }])[0].get()
        #expect(try store.reader.get("c", id: "a") == nil)
    }

    @Test("one failing operation in a batch is undone alone; the others commit")
    func batchSavepoints() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"taken"}"#])
        let results = store.writer.commitBatch([
            { w in try w.insert(into: "c", object(#"{"_id":"one"}"#)) },
            { w in try w.insert(into: "c", object(#"{"_id":"taken"}"#)) },
            { w in try w.insert(into: "new", object(#"{"_id":"two"}"#)) },
        ])
        #expect((try? results[0].get()) != nil)
        #expect((try? results[1].get()) == nil)
        #expect((try? results[2].get()) != nil)
        #expect(try store.idSet("c", json("{}")) == ["taken", "one"])
        #expect(try store.idSet("new", json("{}")) == ["two"])
        let feed = try store.reader.changes(after: 0, limit: 10)
        #expect(feed.changes.map(\.id) == ["taken", "one", "two"], "the failed insert left no change row")
    }

    @Test("a write that read an older version fails with a conflict, decided by the UPDATE")
    func staleRows() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"a","n":1}"#, #"{"_id":"b","n":1}"#])
        let stale = try #require(try store.writer.existingRow(in: "c", id: "a", scope: .system))
        let staleB = try #require(try store.writer.existingRow(in: "c", id: "b", scope: .system))
        _ = try store.writer.commitBatch([{ w in try w.patch(in: "c", id: "a", object(#"{"n":2}"#)) }])[0].get()
        _ = try store.writer.commitBatch([{ w in try w.patch(in: "c", id: "b", object(#"{"n":2}"#)) }])[0].get()
        // Each write given the row as read before the patch (what `Preconditions` checked If-Match against) is refused.
        let refused = store.writer.commitBatch([
            { w in try w.patch(in: "c", id: "a", object(#"{"n":3}"#), existing: stale, scope: .system) },
            { w in try w.replace(in: "c", id: "a", object(#"{"n":3}"#), existing: stale, scope: .system).text },
            { w in try w.delete(from: "c", id: "b", existing: staleB, scope: .system); return "" },
        ])
        for (i, result) in refused.enumerated() {
            guard case .failure(StoreError.conflict(let why)) = result else { Issue.record("write \(i): expected a conflict, got \(result)"); continue }
            #expect(why.contains("changed while this write was made"), "\(why)")
        }
        #expect(object(try #require(try store.reader.get("c", id: "a")))["n"] == .int(2))
        #expect(object(try #require(try store.reader.get("c", id: "b")))["n"] == .int(2))
        // The row read again is current: the same write succeeds.
        let current = try #require(try store.writer.existingRow(in: "c", id: "a", scope: .system))
        _ = try store.writer.commitBatch([{ w in try w.patch(in: "c", id: "a", object(#"{"n":3}"#), existing: current, scope: .system) }])[0].get()
        #expect(object(try #require(try store.reader.get("c", id: "a")))["n"] == .int(3))
        // A row changed by another node after it was read: the compare-and-set UPDATE finds nothing.
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: .init(label: "other"))
        let conflicted = store.writer.commitBatch([{ w -> String in
            let read = try w.existingRow(in: "c", id: "a", scope: .system)
            _ = try other.commitBatch([{ o in try o.patch(in: "c", id: "a", object(#"{"n":4}"#)) }])[0].get()
            return try w.patch(in: "c", id: "a", object(#"{"n":5}"#), existing: read, scope: .system)
        }])
        // (The other node's write waits for nothing here: this batch holds no row lock before its UPDATE.)
        guard case .failure(StoreError.conflict) = conflicted[0] else { Issue.record("expected a conflict, got \(conflicted[0])"); return }
        #expect(object(try #require(try store.reader.get("c", id: "a")))["n"] == .int(4))
    }

    @Test("a lost connection is a retryable error, and the next statement reconnects")
    func lostConnection() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"a"}"#])
        let admin = try PGConnection(url: store.url)
        try admin.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        do {
            _ = try store.reader.get("c", id: "a")
            Issue.record("a terminated connection answered")
        } catch let error as PGError {
            #expect(error.isRetryable, "\(error)")
        }
        #expect(try store.reader.get("c", id: "a") != nil)
    }

    @Test("a connection lost inside a batch fails the whole batch; nothing done before the loss is reported committed")
    func lostInsideABatch() throws {
        let store = try PGTestStore()
        try store.insert("c", [#"{"_id":"warm"}"#])
        let results = store.writer.commitBatch([
            { w in try w.insert(into: "c", object(#"{"_id":"before"}"#)) },
            { w -> String in
                try w.db.run("SELECT pg_terminate_backend(pg_backend_pid())")
                return ""
            },
            { w in try w.insert(into: "c", object(#"{"_id":"after"}"#)) },
        ])
        for result in results { #expect((try? result.get()) == nil, "\(result)") }
        #expect(try store.idSet("c", json("{}")) == ["warm"])
        // The writer reconnects for the next batch.
        try store.insert("c", [#"{"_id":"next"}"#])
        #expect(try store.idSet("c", json("{}")) == ["warm", "next"])
        #expect(try store.reader.changes(after: 0, limit: 10).changes.map(\.id) == ["warm", "next"])
    }

    @Test("libpq's PG* variables work: an empty URL connects through them")
    func environment() throws {
        let store = try PGTestStore()
        let url = try #require(URLComponents(string: store.url))
        setenv("PGHOST", url.host ?? "", 1)
        setenv("PGPORT", String(url.port ?? 0), 1)
        setenv("PGUSER", url.user ?? "", 1)
        setenv("PGDATABASE", String(url.path.dropFirst()), 1)
        defer { for name in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] { unsetenv(name) } }
        let db = try PGConnection(url: "")
        #expect(try db.first("SELECT current_database()") { $0.text(0) } == String(url.path.dropFirst()))
    }
}
