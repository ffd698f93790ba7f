import Foundation
import JSON
import Store
import StoreSQLite
import Testing

/// Indexes built in background steps (collections set up at run time): with
/// writes, updates and deletes between the steps, every query answers as on
/// a collection indexed from the start, at every point of the build, and the
/// finished index holds exactly the entries a whole build writes.
@Suite struct IndexBuildTests {
    static let filters = [#"{"n":{"$gte":10,"$lt":40}}"#, #"{"tag":"t1"}"#, #"{"tag":{"$in":["t0","t2"]},"n":{"$lt":50}}"#,
                          #"{"n":{"$exists":false}}"#, #"{"where":{"$geoWithin":{"$box":[[0,0],[10,10]]}}}"#]

    static func document(_ i: Int) -> String {
        let tag = i % 4 == 0 ? "[\"t\(i % 3)\",\"all\"]" : "\"t\(i % 3)\""
        let n = i % 11 == 0 ? "" : "\"n\":\(i % 60),"
        return "{\"_id\":\"d\(i)\",\(n)\"tag\":\(tag),\"where\":[\(Double(i % 20)),\(Double(i % 13))]}"
    }

    func step(_ store: TestStore, _ specs: Set<IndexSpec>, grace: Double = 0) throws -> IndexBuildProgress {
        try store.writer.commitBatch([{ writer in try writer.buildIndexesStep(specs, on: "c", rows: 7, dropGrace: grace) }])[0].get()
    }

    func answers(_ store: TestStore, _ collection: String) throws -> [String] {
        try Self.filters.map { try store.ids(collection, $0, sort: [(field: "_id", ascending: true)]).joined(separator: ",") }
    }

    @Test func answersNeverChangeWhileIndexesAreBuiltBetweenWrites() throws {
        let store = try TestStore()
        try store.index("whole", ["n", "tag", "where:geo"])
        let specs: Set<IndexSpec> = [try IndexSpec(parsing: "n"), try IndexSpec(parsing: "tag"), try IndexSpec(parsing: "where:geo")]
        var i = 0
        func write(_ count: Int) throws {
            let docs = (i..<(i + count)).map(Self.document)
            try store.insert("c", docs)
            try store.insert("whole", docs)
            i += count
        }
        try write(40)
        var steps = 0
        while true {
            let progress = try step(store, specs)
            CatalogGeneration.bump()
            #expect(try answers(store, "c") == answers(store, "whole"), "after step \(steps)")
            if progress.finished { break }
            try write(3)
            // An update and a delete of documents the build has and has not reached.
            for (name, id) in [("c", "d\(steps % max(i, 1))"), ("whole", "d\(steps % max(i, 1))")] {
                _ = try? store.writer.commitBatch([{ w in try w.patch(in: name, id: id, object(#"{"n":7,"tag":"t9"}"#)) }])[0].get()
            }
            if steps % 5 == 4 {
                for name in ["c", "whole"] { _ = try? store.writer.commitBatch([{ w in try w.delete(from: name, id: "d\(steps)") }])[0].get() }
            }
            steps += 1
            guard steps < 300 else { Issue.record("no end of the build: \(progress)"); return }
        }
        #expect(steps > 3, "the build took several steps")
        #expect(try answers(store, "c") == answers(store, "whole"))
        let entries = { (name: String) throws -> [String] in
            let db = try SQLiteConnection(path: store.path, readOnly: true)
            let id = try db.prepare("SELECT id FROM _collections WHERE name = ?1").firstRow([.text(name)]) { $0.int(0) } ?? 0
            return try db.prepare("SELECT path || ':' || k || ':' || quote(v) || ':' || (SELECT c.id FROM c_\(id) c WHERE c.rid = x.rid) FROM x_\(id) x WHERE k > 0 ORDER BY 1")
                .rows { $0.text(0) }
        }
        #expect(try entries("c") == entries("whole"))
    }

    @Test func aDroppedIndexStopsServingAtOnceAndGoesAfterItsGrace() throws {
        let store = try TestStore()
        try store.insert("c", (0..<30).map(Self.document))
        let n = try IndexSpec(parsing: "n")
        for _ in 0..<50 where !(try step(store, [n]).finished) {}
        CatalogGeneration.bump()
        let before = try answers(store, "c")
        let dropping = try step(store, [], grace: 3600)
        #expect(dropping.entries.map(\.state) == [.dropping])
        #expect(!dropping.finished)
        CatalogGeneration.bump()
        #expect(try answers(store, "c") == before)
        #expect(try !store.reader.plan("c", filter: json(#"{"n":{"$gte":10}}"#)).contains { $0.contains("SEARCH x_") })
        // Wanted again before it went: ready at once, entries kept.
        #expect(try step(store, [n]).entries.map(\.state) == [.ready])
        #expect(try step(store, [], grace: 3600).entries.map(\.state) == [.dropping])
        let gone = try step(store, [], grace: 0)
        #expect(gone.entries.isEmpty && gone.finished)
        CatalogGeneration.bump()
        #expect(try answers(store, "c") == before)
    }
}
