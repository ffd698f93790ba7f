import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// The live probe on PostgreSQL (a compiled filter run on one bound
/// document) answers as a list does: every MongoDB manual example matches
/// the documents the manual names, one document at a time.
@Suite("PostgreSQL engine: the live filter probe")
struct PostgresProbeTests {
    @Test("manual examples, one document at a time", arguments: manualPages)
    func manual(_ page: ManualPage) throws {
        let store = try PGTestStore()
        try store.insert("c", page.documents)
        let stored = try store.reader.find("c", FindQuery(filter: json("{}"), limit: FindQuery.maxLimit))
            .map { (text: $0, id: object($0)["_id"]?.stringValue ?? "?") }
        var probed = 0
        for example in page.cases {
            do {
                let probe = try store.reader.probe(json(example.filter))
                let matched = Set(stored.filter { probe.matches($0.text, id: $0.id, timeLimit: 10) }.map(\.id))
                #expect(matched == example.expected, "\(page.name) \(example.filter)")
                probed += 1
            } catch where isAllowedPostgresRefusal(error) {
                continue
            }
        }
        #expect(probed > 0 || page.cases.isEmpty || page.name.lowercased().contains("geo"), "\(page.name): nothing probed")
    }

    @Test("a filter that fails on a document, or runs past its time limit, does not match; {} matches without SQL")
    func failuresDoNotMatch() throws {
        let store = try PGTestStore()
        #expect(try store.reader.probe(json("{}")).matchesAll)
        let probe = try store.reader.probe(json(#"{"n":{"$gt":1}}"#))
        #expect(probe.matches(#"{"_id":"a","n":2}"#, id: "a"))
        #expect(!probe.matches(#"{"_id":"a","n":1}"#, id: "a"))
        #expect(!probe.matches("not json", id: "a"), "invalid JSON is a failed statement, not a match")
        // The probe's connection is usable after a failure (its transaction was rolled back).
        #expect(probe.matches(#"{"_id":"b","n":5}"#, id: "b", timeLimit: 10))
        #expect(throws: QueryError.self) { try store.reader.probe(json(#"{"$nope":1}"#)) }
    }
}
