import Foundation
import JSON
@testable import Store
import Testing

/// Declared references: the shapes a field may hold, and `_refs` kept in
/// step by every write, with the writer's own last guard on deletes.
@Suite struct ReferenceTests {
    static let field = ReferenceSchema.Field(collection: "catches", field: "spot", target: "spots", onDelete: .restrict)

    @Test("a declared field holds a reference, an array of them, or null", arguments: [
        (#"{"_type":"ref","_collection":"spots","_id":"a"}"#, ["a"]),
        (#"[{"_type":"ref","_collection":"spots","_id":"a"},{"_type":"ref","_collection":"spots","_id":"b"}]"#, ["a", "b"]),
        ("null", []),
        ("[]", []),
    ])
    func shapes(_ text: String, _ expected: [String]) throws {
        #expect(try ReferenceSchema.targets(of: json(text), Self.field, strict: true) == Set(expected))
    }

    @Test("anything else is refused from a client, ignored in stored data", arguments: [
        #""a""#, "7", #"{"_type":"ref","_collection":"other","_id":"a"}"#, #"{"_collection":"spots","_id":"a"}"#,
        #"{"_type":"ref","_collection":"spots","_id":""}"#, #"["a"]"#,
    ])
    func badShapes(_ text: String) throws {
        #expect(throws: StoreError.self) { try ReferenceSchema.targets(of: json(text), Self.field, strict: true) }
        #expect(try ReferenceSchema.targets(of: json(text), Self.field, strict: false).isEmpty)
    }

    @Test("_refs follows inserts, patches and deletes; a referenced target cannot be deleted behind the planner's back")
    func sideTable() throws {
        let store = try TestStore()
        try store.insert("spots", [#"{"_id":"a"}"#, #"{"_id":"b"}"#])
        try store.writer.applyReferences(ReferenceSchema([Self.field]))
        let w = store.writer
        let ref = { (id: String) in #"{"_type":"ref","_collection":"spots","_id":"\#(id)"}"# }
        _ = try w.commitBatch([{ try $0.insert(into: "catches", object(#"{"_id":"c","spot":[\#(ref("a")),\#(ref("b"))]}"#)) }])[0].get()
        #expect(try w.referrerCounts(to: "spots", id: "a").map(\.count) == [1])
        let missing = w.commitBatch([{ try $0.insert(into: "catches", object(#"{"spot":\#(ref("zz"))}"#)) }])[0]
        #expect(throws: StoreError.self) { try missing.get() }
        let blocked = w.commitBatch([{ try $0.delete(from: "spots", id: "a") }])[0]
        #expect(throws: StoreError.self) { try blocked.get() }
        _ = try w.commitBatch([{ try $0.patch(in: "catches", id: "c", object(#"{"spot":[\#(ref("b"))]}"#)) }])[0].get()
        #expect(try w.referrerCounts(to: "spots", id: "a").isEmpty)
        try w.commitBatch([{ try $0.delete(from: "spots", id: "a") }])[0].get()
        try w.commitBatch([{ try $0.delete(from: "catches", id: "c") }])[0].get()
        #expect(try w.referrerCounts(to: "spots", id: "b").isEmpty)
        #expect(try w.danglingReferences().isEmpty)
    }
}
