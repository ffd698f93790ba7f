import Foundation
@testable import Store
import Testing

/// The change feed: one position per committed change, compacted in bounded steps.
@Suite struct ChangeFeedTests {
    @Test("every write gets the next position; compaction removes only what is old, in bounded steps")
    func positionsAndCompaction() throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"a","n":1}"#, #"{"_id":"b","n":2}"#])
        let head = try store.reader.feedHead()
        #expect(head == 2)
        // Nothing is older than a day: a compaction step removes nothing.
        #expect(try store.writer.commitBatch([{ try $0.compactChanges(retention: 86_400) }])[0].get() == 0)
        Thread.sleep(forTimeInterval: 0.01)
        // The newest change stays, however old: it holds the largest position.
        #expect(try store.writer.commitBatch([{ try $0.compactChanges(retention: 0) }])[0].get() == 1)
        #expect(try store.writer.commitBatch([{ try $0.compactChanges(retention: 0) }])[0].get() == 0)
        #expect(try store.reader.feedMeta().horizon == 1)
        #expect(try store.reader.feedHead() == 2)
        // Positions are never reused after compaction.
        try store.insert("c", [#"{"_id":"c","n":3}"#])
        #expect(try store.reader.feedHead() == 3)
        Thread.sleep(forTimeInterval: 0.01)
        #expect(try store.writer.commitBatch([{ try $0.compactChanges(retention: 0) }])[0].get() == 1)
        #expect(try store.reader.feedMeta().horizon == 2)
        let (changes, _) = try store.reader.changes(after: 2, limit: 10)
        #expect(changes.map(\.seq) == [3])
        #expect(changes.first?.after?.contains("\"_id\":\"c\"") == true)
    }
}
