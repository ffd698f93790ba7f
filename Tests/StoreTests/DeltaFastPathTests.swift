import Foundation
@testable import Store
import Testing

/// An empty delta is answered from one statement; base64url is made without Foundation.
@Suite struct DeltaFastPathTests {
    @Test("base64url is the bytes Foundation makes, and reads back, padded or not; cursor texts round-trip")
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
            #expect(FeedCursor(sealedText: cursor.sealedText) == cursor)
        }
        for bad in ["r2|e|l|x1|-|-", "r2|e|l|-1|-|-", "r1|e|l|1|-|-", "r2||l|1|-|-", "r2|e|l|1|-|5", "r2|e|l|1|-"] {
            #expect(FeedCursor(sealedText: bad) == nil, "\(bad)")
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
        // After compaction past a cursor, it is expired on the fast path too. The newest
        // change stays (it holds the largest position), so a cursor just before it is still good.
        Thread.sleep(forTimeInterval: 0.01)
        let removed = try store.writer.commitBatch([{ writer in try writer.compactChanges(retention: Int64(0)) }])[0].get()
        #expect(removed == 2)
        let old = FeedCursor(epoch: cursor.epoch, level: cursor.level, seq: 1, afterRowID: nil)
        #expect(throws: StoreError.self) { try store.reader.delta("c", since: old, filter: json("{}"), limit: 10, scope: scope) }
        #expect(try store.reader.delta("c", since: cursor, filter: json("{}"), limit: 10, scope: scope).changed.count == 1)
        let atHead = try store.reader.delta("c", since: next.cursor, filter: json("{}"), limit: 10, scope: scope)
        #expect(atHead.changed.isEmpty && atHead.cursor == next.cursor)
    }
}
