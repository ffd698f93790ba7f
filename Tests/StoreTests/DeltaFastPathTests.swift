import Foundation
@testable import Store
import Testing

/// An empty delta is answered from one statement; cursors are base64url made without Foundation.
@Suite struct DeltaFastPathTests {
    /// How tokens were made before `Base64URL`: every token handed out so far must still parse.
    static func foundationToken(_ raw: String) -> String {
        Data(raw.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test("tokens are the same bytes Foundation made, and read back, padded or not")
    func tokens() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours = Base64URL.encode(bytes)
            let theirs = Data(bytes).base64EncodedString()
            #expect(ours == theirs.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: ""))
            #expect(Base64URL.decode(ours) == bytes)
            #expect(Base64URL.decode(theirs) == bytes) // standard alphabet and padding
        }
        for cursor in [FeedCursor(epoch: "0123456789abcdef", level: "public@items", seq: 42, afterRowID: nil),
                       FeedCursor(epoch: "ffee", level: "private@notes", seq: 7, afterRowID: 99, base: 3)] {
            #expect(FeedCursor(token: cursor.token) == cursor)
            let raw = ["r1", cursor.epoch, cursor.level, String(cursor.seq), cursor.afterRowID.map(String.init) ?? "-",
                       cursor.base.map(String.init) ?? "-"].joined(separator: "|")
            #expect(cursor.token == Self.foundationToken(raw))
        }
        for bad in ["", "a", "abcde", "ab$c", "cjF8", String(repeating: "A", count: 201), Base64URL.encode([0xFF, 0xFE, 0x7C])] {
            #expect(FeedCursor(token: bad) == nil, "\(bad)")
        }
    }

    @Test("an empty delta keeps the cursor's checks; a change in the collection, not elsewhere, makes it non-empty")
    func emptyDelta() throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"a","n":1}"#])
        let scope = AccessScope.system
        let first = try store.reader.delta("c", since: nil, filter: json("{}"), limit: 10, scope: scope)
        var cursor = first.cursor
        let empty = try store.reader.delta("c", since: cursor, filter: json("{}"), limit: 10, scope: scope)
        // (The listing's cursor carries its start as `base`; a page after it needs none.)
        #expect(empty.changed.isEmpty && empty.deleted.isEmpty && !empty.more)
        #expect(empty.cursor == FeedCursor(epoch: cursor.epoch, level: cursor.level, seq: cursor.seq, afterRowID: nil))
        // Another collection's change: still empty here, and the cursor moves to the head.
        try store.insert("other", [#"{"_id":"x"}"#])
        let moved = try store.reader.delta("c", since: cursor, filter: json("{}"), limit: 10, scope: scope)
        #expect(moved.changed.isEmpty && moved.cursor.seq == 2)
        cursor = moved.cursor
        // A bad filter is still refused on the fast path.
        #expect(throws: (any Error).self) { try store.reader.delta("c", since: cursor, filter: json(#"{"$nope":1}"#), limit: 10, scope: scope) }
        // A cursor of another epoch, level, or past the head is refused, not answered empty.
        for wrong in [FeedCursor(epoch: "other", level: cursor.level, seq: cursor.seq, afterRowID: nil),
                      FeedCursor(epoch: cursor.epoch, level: "private@c", seq: cursor.seq, afterRowID: nil),
                      FeedCursor(epoch: cursor.epoch, level: cursor.level, seq: cursor.seq + 5, afterRowID: nil)] {
            #expect(throws: StoreError.self) { try store.reader.delta("c", since: wrong, filter: json("{}"), limit: 10, scope: scope) }
        }
        // A change in the collection: the next delta has it.
        try store.insert("c", [#"{"_id":"b","n":2}"#])
        let next = try store.reader.delta("c", since: cursor, filter: json("{}"), limit: 10, scope: scope)
        #expect(next.changed.count == 1 && next.changed[0].contains("\"_id\":\"b\"") && next.cursor.seq == 3)
        // After compaction past the cursor, it is expired on the fast path too.
        Thread.sleep(forTimeInterval: 0.01)
        let removed = try store.writer.commitBatch([{ writer in try writer.compactChanges(retention: Int64(0)) }])[0].get()
        #expect(removed == 3)
        #expect(throws: StoreError.self) { try store.reader.delta("c", since: cursor, filter: json("{}"), limit: 10, scope: scope) }
        let atHead = try store.reader.delta("c", since: next.cursor, filter: json("{}"), limit: 10, scope: scope)
        #expect(atHead.changed.isEmpty && atHead.cursor == next.cursor)
    }
}
