import Foundation
import Testing
@testable import RoostKit

/// Local indexes (``Mirror/indexes``): a local query on an indexed path reads
/// only its candidates, and answers exactly what a full scan answers.
@Suite("Local indexes") struct LocalIndexTests {
    static let categories = ["Park", "Museum", "Café", "Cafe\u{301}"]   // "Café" twice: composed and decomposed

    /// The same 200 places in an indexed and an unindexed store.
    static func stores() async throws -> (indexed: OfflineStore, plain: OfflineStore) {
        let indexed = try OfflineStore(client: LocalStoreTests.client, url: try LocalStoreTests.scratch(),
                                       mirrors: [Mirror("places", indexes: ["category", "rank", "tags", "open", "address.city"])])
        let plain = try OfflineStore(client: LocalStoreTests.client, url: try LocalStoreTests.scratch(), mirrors: [Mirror("places")])
        for store in [indexed, plain] {
            let places = store.collection("places", of: JSONValue.self)
            for i in 0..<200 {
                var doc: JSONValue = ["category": .string(categories[i % 4]), "rank": .number(Double(i % 50)),
                                      "tags": [.string("t\(i % 7)"), .string("all")], "open": .bool(i % 2 == 0),
                                      "address": ["city": .string(i % 3 == 0 ? "Oslo" : "Bergen")]]
                if i % 10 == 0 { doc["rank"] = .string("\(i % 50)") }   // a string where numbers are usual
                _ = try await places.create(doc, id: String(format: "p%03d", i))
            }
        }
        return (indexed, plain)
    }

    static let cases: [(String, Filter)] = [
        ("string equality (canonical forms)", Field("category") == "Café"),
        ("$in", Field("category").isIn(["Park", "Museum"])),
        ("numeric range", Field("rank") >= 10 && Field("rank") < 12),
        ("$eq on a number, strings not matched", Field("rank") == 0),
        ("string that looks like a number", Field("rank") == "10"),
        ("array element", Field("tags") == "t3"),
        ("boolean", Field("open") == true),
        ("dotted path plus an unindexed condition", Field("address.city") == "Oslo" && Field("category") == "Park"),
    ]

    @Test("indexed and full-scan queries agree, and the index reads only candidates")
    func agreeAndNarrow() async throws {
        let (indexed, plain) = try await Self.stores()
        for (name, filter) in Self.cases {
            let query = Query(filter).sorted(by: "_id")
            let before = await indexed.documentsRead
            let a = try await indexed.find("places", query)
            let read = await indexed.documentsRead - before
            let b = try await plain.find("places", query)
            #expect(a == b, "\(name)")
            #expect(!a.isEmpty || name.contains("not matched"), "\(name)")
            #expect(read < 200 && read >= a.count, "\(name): read \(read) for \(a.count)")
        }
    }

    @Test("the index follows patches, deletes, and a new declaration at the next launch")
    func maintained() async throws {
        let url = try LocalStoreTests.scratch()
        do {
            let store = try OfflineStore(client: LocalStoreTests.client, url: url, mirrors: [Mirror("places", indexes: ["category"])])
            let places = store.collection("places", of: JSONValue.self)
            _ = try await places.create(["category": "Park", "rank": 1], id: "a")
            _ = try await places.create(["category": "Park", "rank": 2], id: "b")
            try await places.patch("a", ["category": "Museum"])
            try await places.delete("b")
            #expect(try await store.find("places", Query(Field("category") == "Park")).isEmpty)
            #expect(try await store.find("places", Query(Field("category") == "Museum")).map { $0["_id"] } == ["a"])
        }
        // Relaunched with "rank" indexed too: it is filled from the local copies.
        let store = try OfflineStore(client: LocalStoreTests.client, url: url, mirrors: [Mirror("places", indexes: ["category", "rank"])])
        let before = await store.documentsRead
        #expect(try await store.find("places", Query(Field("rank") == 1)).map { $0["_id"] } == ["a"])
        #expect(await store.documentsRead - before == 1)
    }
}
