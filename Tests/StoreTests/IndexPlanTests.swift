import JSON
import Store
import Testing

/// How indexed queries run: bounds combine into one range only while a path
/// never held an array, and counts of pure index look-ups skip the documents.
@Suite struct IndexPlanTests {
    @Test func rangeBoundsCombineUntilThePathHoldsAnArray() throws {
        let store = try TestStore()
        try store.index("c", ["n"])
        try store.insert("c", (0..<50).map { "{\"_id\":\"d\($0)\",\"n\":\($0)}" })
        let filter = json(#"{"n":{"$gte":10,"$lt":20}}"#)
        let scalarPlan = try store.reader.plan("c", filter: filter)
        #expect(scalarPlan.filter { $0.contains("SEARCH x_") }.count == 1, "\(scalarPlan)")
        #expect(try store.reader.count("c", filter: filter) == 10)

        // An array that satisfies each bound with a different element: MongoDB matches it.
        try store.insert("c", [#"{"_id":"split","n":[5,25]}"#])
        let multikeyPlan = try store.reader.plan("c", filter: filter)
        #expect(multikeyPlan.filter { $0.contains("SEARCH x_") }.count == 2, "\(multikeyPlan)")
        #expect(try store.ids("c", #"{"n":{"$gte":10,"$lt":20}}"#).contains("split"))
        #expect(try store.reader.count("c", filter: filter) == 11)
    }

    @Test func countsOfIndexLookupsAgreeWithLists() throws {
        let store = try TestStore()
        try store.index("c", ["tag", "n"])
        try store.insert("c", (0..<60).map { "{\"tag\":[\"t\($0 % 3)\",\"all\"],\"n\":\($0)}" })
        // Lone multi-value look-ups over an array field meet a document once per
        // matching element: their count must still count it once.
        for text in [#"{"tag":"t1"}"#, #"{"tag":{"$in":["t1","t2"]}}"#, #"{"tag":"all","n":{"$lt":10}}"#, #"{"tag":{"$all":["t0","all"]}}"#,
                     #"{"tag":{"$in":["t1","all"]}}"#, #"{"tag":{"$gte":"all"}}"#, #"{"n":{"$in":[1,2,3]}}"#] {
            let filter = json(text)
            let listed = try store.reader.find("c", FindQuery(filter: filter, limit: 1000)).count
            #expect(try store.reader.count("c", filter: filter) == listed, "\(text)")
        }
    }

    @Test func singleEqualityPagesWalkTheIndexInRowOrder() throws {
        let store = try TestStore()
        try store.index("c", ["tag"])
        for name in ["c", "plain"] {
            try store.insert(name, (0..<40).map { "{\"_id\":\"d\($0)\",\"tag\":\($0 % 3 == 0 ? "[\"x\",\"x\",\"y\"]" : "\"y\"")}" })
        }
        for (skip, limit) in [(0, 5), (3, 7), (35, 10)] {
            let query = FindQuery(filter: json(#"{"tag":"y"}"#), limit: limit, skip: skip)
            let ids = { (texts: [String]) in texts.map { object($0)["_id"] } }
            let indexed = ids(try store.reader.find("c", query))
            let plain = ids(try store.reader.find("plain", query))
            #expect(indexed == plain, "skip \(skip) limit \(limit)")
            #expect(indexed.count == min(limit, max(0, 40 - skip)))
        }
    }
}
