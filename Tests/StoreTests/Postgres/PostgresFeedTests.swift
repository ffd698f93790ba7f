import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Delta sync and the change feed on PostgreSQL give what SQLite gives for
/// the same writes: the same pages, deletes, `more` flags and cursor
/// positions, the same changes with the same before and after states, and
/// the same refusals (a compacted cursor, a new epoch, another level).
@Suite("PostgreSQL engine: delta sync and change feed, against SQLite")
struct PostgresFeedTests {
    /// One write, applied the same way to both engines.
    enum Write {
        case insert(String, String, AccessScope)
        case replace(String, String, String, AccessScope)
        case patch(String, String, String, AccessScope)
        case delete(String, String, AccessScope)
    }

    static let alice = AccessScope(principal: .user("alice"), level: .private)
    static let bob = AccessScope(principal: .user("bob"), level: .private)
    static let shared = AccessScope(principal: .user("bob"), level: .shared)

    /// Readers that sync after every round: (name, collection, scope, filter, page size).
    static let syncers: [(String, String, AccessScope, String, Int)] = [
        ("alice notes", "notes", alice, "{}", 100),
        ("bob notes", "notes", bob, "{}", 100),
        ("bob notes, n>=2, pages of 1", "notes", bob, #"{"n":{"$gte":2}}"#, 1),
        ("system items", "items", .system, "{}", 2),
        ("shared items red", "items", shared, #"{"color":"red"}"#, 100),
        ("admin never-written", "empty", .system, "{}", 10),
    ]

    /// Rounds of writes; every syncer syncs (paging to the end) after each.
    static let rounds: [[Write]] = [
        [.insert("notes", #"{"_id":"alice:n1","n":1,"_acl":{"read":["bob"]}}"#, alice),
         .insert("notes", #"{"_id":"alice:n2","n":2}"#, alice),
         .insert("items", #"{"_id":"i1","color":"red"}"#, .system),
         .insert("items", #"{"_id":"i2","color":"blue"}"#, .system),
         .insert("items", #"{"_id":"i3","color":"red","w":{"a":1,"b":[1,2]}}"#, .system)],
        [.patch("notes", "alice:n1", #"{"n":3}"#, alice),
         .patch("items", "i2", #"{"color":"red"}"#, .system),
         .insert("notes", #"{"_id":"bob:b1","n":5}"#, bob)],
        // ACL changes: bob loses n1, gains n2; an item leaves the red filter.
        [.patch("notes", "alice:n1", #"{"_acl":{"read":[]}}"#, alice),
         .patch("notes", "alice:n2", #"{"_acl":{"write":["bob"]}}"#, alice),
         .patch("items", "i1", #"{"color":"green"}"#, .system)],
        [.delete("notes", "alice:n2", alice),
         .delete("items", "i3", .system),
         .replace("items", "i4", #"{"color":"red","new":true}"#, .system),
         .replace("items", "i2", #"{"color":"blue"}"#, .system)],
        [.patch("items", "i4", #"{"v":1}"#, .system), .patch("items", "i4", #"{"v":2}"#, .system),
         .insert("notes", #"{"_id":"alice:n3","n":2,"_acl":{"read":["bob"]}}"#, alice),
         .delete("notes", "bob:b1", bob),
         .insert("items", #"{"_id":"i3","color":"red","again":true}"#, .system)],
    ]

    /// A document without its timestamps (which differ between two stores), as text.
    static func normal(_ text: String?) -> String? {
        guard let text, case .object(var o)? = try? JSONParser.parse(text) else { return text }
        o["_createdAt"] = nil
        o["_updatedAt"] = nil
        return o.jsonText
    }

    /// One page as compared: changed (normalized), deleted, more, and the cursor without its epoch.
    static func shape(_ page: DeltaPage) -> String {
        "\(page.changed.map { normal($0) ?? "" }) deleted \(page.deleted) more \(page.more) at \(page.cursor.level) \(page.cursor.seq) \(String(describing: page.cursor.afterRowID)) \(String(describing: page.cursor.base))"
    }

    /// Applies `write` in a group commit of its own, on either engine.
    static func apply(_ write: Write, to writer: any DocumentWriting) throws {
        try writer.inBatch { w -> Void in
            switch write {
            case .insert(let c, let body, let scope): _ = try w.insert(into: c, object(body), scope: scope)
            case .replace(let c, let id, let body, let scope): _ = try w.replace(in: c, id: id, object(body), scope: scope)
            case .patch(let c, let id, let body, let scope): _ = try w.patch(in: c, id: id, object(body), scope: scope)
            case .delete(let c, let id, let scope): try w.delete(from: c, id: id, scope: scope)
            }
        }
    }

    /// Syncs from `cursor` until no page follows; every page's shape, and the last cursor.
    static func sync(_ delta: (FeedCursor?) throws -> DeltaPage, from cursor: FeedCursor?) throws -> (pages: [String], cursor: FeedCursor) {
        var pages: [String] = []
        var page = try delta(cursor)
        pages.append(shape(page))
        while page.more {
            page = try delta(page.cursor)
            pages.append(shape(page))
        }
        return (pages, page.cursor)
    }

    @Test("every syncer's pages after every round of writes, and the whole feed with states, are SQLite's")
    func deltaAndChangesAgree() throws {
        let lite = try TestStore()
        let pg = try PGTestStore()
        try lite.users(["bob"])
        try pg.users(["bob"])
        // A second node: its own reader on the same database opens the first node's tokens.
        let nodeB = try PostgresDocumentReader(url: pg.url)
        var liteCursors = [FeedCursor?](repeating: nil, count: Self.syncers.count)
        var pgCursors = liteCursors
        for (round, writes) in ([[]] + Self.rounds).enumerated() {
            for write in writes {
                try Self.apply(write, to: lite.writer)
                try Self.apply(write, to: pg.writer)
            }
            for (i, (name, collection, scope, filter, limit)) in Self.syncers.enumerated() {
                let expected = try Self.sync({ try lite.reader.delta(collection, since: $0, filter: json(filter), limit: limit, scope: scope) },
                                             from: liteCursors[i])
                // Odd rounds read on node B, from a token sealed on node A.
                let reader = round % 2 == 1 ? nodeB : pg.reader
                let since = try pgCursors[i].map { try reader.cursorSeal().open(try pg.reader.cursorSeal().token($0)) }
                let actual = try Self.sync({ try reader.delta(collection, since: $0 ?? nil, filter: json(filter), limit: limit, scope: scope) },
                                           from: since ?? nil)
                #expect(actual.pages == expected.pages, "round \(round), \(name)")
                liteCursors[i] = expected.cursor
                pgCursors[i] = actual.cursor
            }
        }
        for limit in [1, 3, 100] {
            var liteAt: Int64 = 0, pgAt: Int64 = 0
            var liteAll: [String] = [], pgAll: [String] = []
            while true {
                let l = try lite.reader.changes(after: liteAt, limit: limit), p = try pg.reader.changes(after: pgAt, limit: limit)
                #expect(l.head == p.head)
                liteAll += l.changes.map { "\($0.seq) \($0.collection)/\($0.id) \($0.operation) \(Self.normal($0.before) ?? "-") -> \(Self.normal($0.after) ?? "-")" }
                pgAll += p.changes.map { "\($0.seq) \($0.collection)/\($0.id) \($0.operation) \(Self.normal($0.before) ?? "-") -> \(Self.normal($0.after) ?? "-")" }
                guard let last = l.changes.last, let lastPG = p.changes.last else { break }
                liteAt = last.seq
                pgAt = lastPG.seq
            }
            #expect(pgAll == liteAll, "changes in batches of \(limit)")
            #expect(liteAll.count == 20)
        }
        #expect(try pg.reader.feedHead() == lite.reader.feedHead())
    }

    @Test("a compacted cursor, a renewed epoch, another level or a foreign token is refused on both engines")
    func refusals() throws {
        let lite = try TestStore()
        let pg = try PGTestStore()
        for (i, body) in [#"{"_id":"a"}"#, #"{"_id":"b"}"#, #"{"_id":"c"}"#].enumerated() {
            try Self.apply(.insert("c", body, .system), to: lite.writer)
            try Self.apply(.insert("c", body, .system), to: pg.writer)
            _ = i
        }
        let liteStart = try lite.reader.delta("c", since: nil, filter: json("{}"), limit: 10, scope: .system).cursor
        let pgStart = try pg.reader.delta("c", since: nil, filter: json("{}"), limit: 10, scope: .system).cursor
        // Another level: a cursor of the system scope read by a shared reader.
        let other = AccessScope(principal: .user("u"), level: .shared)
        #expect(Self.refused { try lite.reader.delta("c", since: liteStart, filter: json("{}"), limit: 10, scope: other) })
        #expect(Self.refused { try pg.reader.delta("c", since: pgStart, filter: json("{}"), limit: 10, scope: other) })
        // A token this database did not seal opens as foreign and is refused.
        let foreign = try #require(try pg.reader.cursorSeal().open(try lite.reader.cursorSeal().token(liteStart)))
        #expect(foreign == .foreign)
        #expect(Self.refused { try pg.reader.delta("c", since: foreign, filter: json("{}"), limit: 10, scope: .system) })
        // Compaction: the same rows go; a cursor below the horizon is refused, one at the head is not.
        try Self.apply(.insert("c", #"{"_id":"d"}"#, .system), to: lite.writer)
        try Self.apply(.insert("c", #"{"_id":"d"}"#, .system), to: pg.writer)
        let liteRemoved = try lite.writer.commitBatch([{ try $0.compactChanges(retention: Int64(0)) }])[0].get()
        let pgRemoved = try pg.writer.commitBatch([{ try $0.compactChanges(retention: Int64(0)) }])[0].get()
        #expect(pgRemoved == liteRemoved && pgRemoved == 3)
        #expect(try pg.writer.commitBatch([{ try $0.compactChanges(retention: 0) }])[0].get() == 0, "the newest row stays")
        #expect(try pg.reader.feedMeta().horizon == lite.reader.feedMeta().horizon)
        #expect(try pg.reader.feedHead() == 4)
        let stale = FeedCursor(epoch: pgStart.epoch, level: pgStart.level, seq: 2, afterRowID: nil)
        #expect(Self.refused { try lite.reader.delta("c", since: FeedCursor(epoch: liteStart.epoch, level: liteStart.level, seq: 2, afterRowID: nil), filter: json("{}"), limit: 10, scope: .system) })
        #expect(Self.refused { try pg.reader.delta("c", since: stale, filter: json("{}"), limit: 10, scope: .system) })
        let atHorizon = FeedCursor(epoch: pgStart.epoch, level: pgStart.level, seq: 3, afterRowID: nil)
        #expect(try pg.reader.delta("c", since: atHorizon, filter: json("{}"), limit: 10, scope: .system).changed.count == 1)
        #expect(try pg.reader.changes(after: 3, limit: 10).changes.map(\.id) == ["d"])
        // A new epoch refuses every earlier cursor, on any node.
        try pg.writer.commitBatch([{ try $0.renewFeedEpoch() }])[0].get()
        #expect(try pg.reader.feedMeta().epoch != pgStart.epoch)
        #expect(Self.refused { try pg.reader.delta("c", since: atHorizon, filter: json("{}"), limit: 10, scope: .system) })
        #expect(Self.refused { try PostgresDocumentReader(url: pg.url).delta("c", since: atHorizon, filter: json("{}"), limit: 10, scope: .system) })
        // A bad filter is a QueryError (400), on the fast path too.
        let fresh = try pg.reader.delta("c", since: nil, filter: json("{}"), limit: 10, scope: .system).cursor
        #expect(throws: QueryError.self) { try pg.reader.delta("c", since: fresh, filter: json(#"{"$nope":1}"#), limit: 10, scope: .system) }
    }

    /// True when `body` throws `StoreError.expired`.
    static func refused(_ body: () throws -> DeltaPage) -> Bool {
        do {
            _ = try body()
            return false
        } catch StoreError.expired {
            return true
        } catch {
            return false
        }
    }
}
