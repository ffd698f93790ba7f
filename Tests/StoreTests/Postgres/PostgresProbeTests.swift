import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// The live probe on PostgreSQL (a compiled filter run on one bound
/// document): failures do not match. That it answers as a list does, for
/// every MongoDB manual example, is checked with the list and the count in
/// `PostgresDifferentialTests.manual`.
@Suite("PostgreSQL engine: the live filter probe")
struct PostgresProbeTests {
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
