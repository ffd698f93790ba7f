import Foundation
import JSON
import Store
import Testing

/// One example from the MongoDB manual: a filter and the documents it returns.
struct ManualCase: Sendable, CustomTestStringConvertible {
    let filter: String
    let expected: Set<String>
    init(_ filter: String, _ expected: [String]) {
        self.filter = filter
        self.expected = Set(expected)
    }
    var testDescription: String { filter }
}

/// A manual page: its sample documents, the fields worth indexing, and its examples.
struct ManualPage: Sendable, CustomTestStringConvertible {
    let name: String
    let documents: [String]
    let indexes: [String]
    let cases: [ManualCase]
    var testDescription: String { name }
}

/// The "inventory" documents of "Query Documents" and "Query on Embedded/Nested Documents".
let inventoryBasic = [
    #"{"_id":"journal","item":"journal","qty":25,"size":{"h":14,"w":21,"uom":"cm"},"status":"A"}"#,
    #"{"_id":"notebook","item":"notebook","qty":50,"size":{"h":8.5,"w":11,"uom":"in"},"status":"A"}"#,
    #"{"_id":"paper","item":"paper","qty":100,"size":{"h":8.5,"w":11,"uom":"in"},"status":"D"}"#,
    #"{"_id":"planner","item":"planner","qty":75,"size":{"h":22.85,"w":30,"uom":"cm"},"status":"D"}"#,
    #"{"_id":"postcard","item":"postcard","qty":45,"size":{"h":10,"w":15.25,"uom":"cm"},"status":"A"}"#,
]

let manualPages: [ManualPage] = manualQueryPages + manualOperatorPages + manualJSTestPages

@Suite("MongoDB manual examples")
struct ManualExamplesTests {
    @Test("manual page examples, unindexed and indexed", arguments: manualPages)
    func page(_ page: ManualPage) throws {
        let store = try TestStore()
        try store.insert("plain", page.documents)
        try store.insert("indexed", page.documents)
        try store.index("indexed", page.indexes)
        for example in page.cases {
            for collection in ["plain", "indexed"] {
                let found = try store.idSet(collection, json(example.filter))
                #expect(found == example.expected, "\(page.name) [\(collection)] \(example.filter)")
                let count = try store.reader.count(collection, filter: json(example.filter))
                #expect(count == example.expected.count, "count \(page.name) [\(collection)] \(example.filter)")
            }
        }
    }

    @Test("indexes declared before the documents are written give the same answers", arguments: manualPages)
    func indexesFirst(_ page: ManualPage) throws {
        let store = try TestStore()
        try store.index("c", page.indexes)
        try store.insert("c", page.documents)
        for example in page.cases {
            #expect(try store.idSet("c", json(example.filter)) == example.expected, "\(page.name) \(example.filter)")
        }
    }

    @Test("documents stay findable through replace, patch and delete with indexes")
    func writesKeepIndexesInStep() throws {
        let store = try TestStore()
        try store.index("c", ["qty", "tags"])
        try store.insert("c", [#"{"_id":"x","qty":5,"tags":["a","b"]}"#, #"{"_id":"y","qty":7,"tags":["c"]}"#])
        _ = store.writer.commitBatch([
            { w in _ = try w.replace(in: "c", id: "x", object(#"{"qty":9,"tags":["z"]}"#)) },
            { w in _ = try w.patch(in: "c", id: "y", object(#"{"qty":5}"#)) },
        ]).map { try? $0.get() }
        #expect(try store.idSet("c", json(#"{"qty":5}"#)) == ["y"])
        #expect(try store.idSet("c", json(#"{"tags":"a"}"#)) == [])
        #expect(try store.idSet("c", json(#"{"tags":"z"}"#)) == ["x"])
        #expect(try store.idSet("c", json(#"{"qty":{"$gt":6}}"#)) == ["x"])
        _ = store.writer.commitBatch([{ w in try w.delete(from: "c", id: "x") }]).map { try? $0.get() }
        #expect(try store.idSet("c", json(#"{"tags":"z"}"#)) == [])
        #expect(try store.idSet("c", json(#"{}"#)) == ["y"])
    }
}
