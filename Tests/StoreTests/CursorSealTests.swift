import Foundation
import Logging
@testable import Store
@testable import StoreSQLite
import Testing

/// Sealed feed cursors, and migration 10 (the feed without AUTOINCREMENT).
@Suite struct CursorSealTests {
    static let cursor = FeedCursor(epoch: "0123456789abcdef", level: "private@notes", seq: 42, afterRowID: 7, base: 40)

    @Test("a token opens to its cursor; two tokens for one position differ; the length does not follow the position")
    func roundTrip() throws {
        let store = try TestStore()
        let seal = try store.reader.cursorSeal()
        let a = seal.token(Self.cursor), b = seal.token(Self.cursor)
        #expect(a != b)
        #expect(seal.open(a) == Self.cursor && seal.open(b) == Self.cursor)
        #expect(!a.contains("notes") && Base64URL.decode(a).map { String(decoding: $0, as: UTF8.self).contains("notes") } == false)
        let lengths = Set([0, 1, 42, 99_999, Int64.max].map {
            seal.token(FeedCursor(epoch: Self.cursor.epoch, level: "shared@c", seq: $0, afterRowID: nil)).count
        })
        #expect(lengths.count == 1)
        #expect(seal.token(FeedCursor(epoch: "0123456789abcdef", level: "shared@c", seq: 1, afterRowID: 5, base: 1)).count == lengths.first)
    }

    @Test("any changed byte, or another database's key, opens as foreign; what is no token opens as nil")
    func refusals() throws {
        let store = try TestStore(), other = try TestStore()
        let seal = try store.reader.cursorSeal()
        let token = seal.token(Self.cursor)
        let bytes = try #require(Base64URL.decode(token))
        for i in 1..<bytes.count {
            var changed = bytes
            changed[i] ^= 0x01
            #expect(seal.open(Base64URL.encode(changed)) == .foreign, "byte \(i)")
        }
        #expect(try other.reader.cursorSeal().open(token) == .foreign)
        var version = bytes
        version[0] ^= 0x01
        for bad in ["", "a", "abcde", "ab$c", String(repeating: "A", count: 400), Base64URL.encode(version), Base64URL.encode(Array(bytes.prefix(40)))] {
            #expect(seal.open(bad) == nil, "\(bad)")
        }
        // An unsealed cursor of an older roostd is one this database no longer accepts: expired.
        #expect(seal.open(Base64URL.encode(Array("r1|0123456789abcdef|public@c|3|-|-".utf8))) == .foreign)
        // The key is kept in the database: a second reader opens the first one's tokens.
        #expect(try DocumentReader(path: store.path).cursorSeal().open(token) == Self.cursor)
    }

    @Test("migration 10 copies the feed, keeps its positions, and never hands out one that was used")
    func migration() throws {
        for compactedEmpty in [false, true] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-m10-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("store.sqlite").path
            let db = try SQLiteConnection(path: path)
            try db.exec("CREATE TABLE _migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            for step in Migrations.all where step.version <= 9 {
                try db.transaction {
                    if !step.sql.isEmpty { try db.exec(step.sql) }
                    try step.code?(db)
                    try db.prepare("INSERT INTO _migrations (version, applied_at) VALUES (?1, 'x')").run([.int(Int64(step.version))])
                }
            }
            for n in 1...3 {
                try db.prepare("INSERT INTO _changes (coll, id, op, at) VALUES ('c', ?1, 1, 0)").run([.text("d\(n)")])
            }
            let horizon = compactedEmpty ? 3 : 1
            try db.prepare("DELETE FROM _changes WHERE seq <= ?1").run([.int(Int64(horizon))])
            try db.prepare("UPDATE _meta SET value = ?1 WHERE key = 'feed_horizon'").run([.text(String(horizon))])
            try Migrations.apply(on: db, logger: Logger(label: "test"))
            let schema = try db.prepare("SELECT sql FROM sqlite_master WHERE name = '_changes'").firstRow { $0.text(0) } ?? ""
            #expect(!schema.contains("AUTOINCREMENT"))
            let rows = try db.prepare("SELECT seq, coll FROM _changes ORDER BY seq").rows { ($0.int(0), $0.text(1)) }
            #expect(rows.map(\.0) == (compactedEmpty ? [3] : [2, 3]))
            #expect(rows.map(\.1) == (compactedEmpty ? [""] : ["c", "c"]))
            let writer = try DocumentWriter(path: path, ids: DocumentID(), logger: Logger(label: "test"))
            try writer.migrate()
            _ = try writer.commitBatch([{ try $0.insert(into: "c", object(#"{"_id":"next"}"#)) }])[0].get()
            let reader = try DocumentReader(path: path)
            #expect(try reader.feedHead() == 4)
            _ = try reader.cursorSeal()
            // The marker row is never delivered: every cursor is at or past the horizon.
            #expect(try reader.changes(after: 3, limit: 10).changes.map(\.id) == ["next"])
        }
    }
}

/// Keyset cursors (`X-Roost-Next`) under the same seal.
@Suite struct KeysetCursorSealTests {
    @Test("a keyset token opens to its values, reveals nothing and is as long whatever the row id")
    func keysetRoundTrip() throws {
        let store = try TestStore()
        let seal = try store.reader.cursorSeal()
        let cursor = KeysetCursor(order: "n:1", values: [.text("secret-ish"), .int(12345)])
        let token = cursor.token(seal)
        #expect(try KeysetCursor(token: token, order: "n:1", count: 2, seal: seal) == cursor)
        #expect(token != cursor.token(seal))
        #expect(Base64URL.decode(token).map { String(decoding: $0, as: UTF8.self).contains("secret") } == false)
        let lengths = Set([0, 9, 10, 99_999, 1 << 40, Int64.max].map {
            KeysetCursor(order: "n:1", values: [.text("secret-ish"), .int($0)]).token(seal).count
        })
        #expect(lengths.count == 1)
    }

    @Test("a changed, foreign, feed or made-up keyset token is a QueryError")
    func keysetRefusals() throws {
        let store = try TestStore(), other = try TestStore()
        let seal = try store.reader.cursorSeal()
        let token = KeysetCursor(order: "n:1", values: [.int(3), .int(4)]).token(seal)
        let bytes = try #require(Base64URL.decode(token))
        var bad = (1..<bytes.count).map { i -> String in
            var changed = bytes
            changed[i] ^= 0x01
            return Base64URL.encode(changed)
        }
        bad += [try other.reader.cursorSeal().token(FeedCursor(epoch: "e", level: "l", seq: 1, afterRowID: nil)),
                KeysetCursor(order: "n:1", values: [.int(3), .int(4)]).token(try other.reader.cursorSeal()),
                seal.token(FeedCursor(epoch: "e", level: "l", seq: 1, afterRowID: nil)),
                "", "!!", Base64URL.encode(Array(#"{"o":"n:1","v":[3,4]}"#.utf8))]
        for text in bad {
            #expect(throws: QueryError.self) { try KeysetCursor(token: text, order: "n:1", count: 2, seal: seal) }
            #expect(throws: QueryError.self) { try KeysetCursor.check(token: text, seal: seal) }
        }
        #expect(throws: QueryError.self) { try KeysetCursor(token: token, order: "n:-1", count: 2, seal: seal) }
    }
}
