import Foundation
import Testing
@testable import RoostKit

@Suite("Server-Sent Events parser") struct SSEParserTests {
    @Test("events, ids, comments, multi-line data, CRLF split across chunks")
    func parse() {
        var parser = SSEParser()
        var events: [SSEEvent] = []
        let wire = ": hello\r\nid: 1\r\nevent: create\r\ndata: {\"a\":1}\r\n\r\nid: 2\nevent: update\ndata: line1\ndata: line2\n\nretry: 500\n\nid:3\ndata\n\n"
        // Feed one byte at a time: every split point, a CR/LF pair included.
        for byte in Data(wire.utf8) { events += parser.feed(Data([byte])) }
        #expect(events.count == 4)
        #expect(events[0] == SSEEvent(id: "1", event: "create", data: "{\"a\":1}", retry: nil))
        #expect(events[1] == SSEEvent(id: "2", event: "update", data: "line1\nline2", retry: nil))
        #expect(events[2].retry == 500)
        #expect(events[3] == SSEEvent(id: "3", event: "message", data: "", retry: nil))
    }

    @Test("live events decode their collection, id and entity")
    func liveEvent() throws {
        let sse = SSEEvent(id: "c9", event: "update", data: #"{"collection":"notes","_id":"n1","entity":{"_id":"n1","title":"t"}}"#, retry: nil)
        let event = try #require(LiveEvent(sse, collection: "notes"))
        #expect(event.kind == .update)
        #expect(event.entityID == "n1")
        #expect(event.id == "c9")
        #expect(try event.entity(as: Note.self)?.value.title == "t")
        let gone = try #require(LiveEvent(SSEEvent(id: "d", event: "delete", data: #"{"collection":"notes","_id":"n1"}"#, retry: nil), collection: "notes"))
        #expect(gone.kind == .delete && gone.entity == nil)
        #expect(LiveEvent.Kind(rawValue: "future") != .reset)
    }

    @Test("local matcher follows MongoDB's array and null rules")
    func matcher() throws {
        let doc: JSONValue = ["tags": ["a", "b"], "n": 3, "s": "3", "sub": [["k": 1], ["k": 2]]]
        func m(_ p: Filter) throws -> Bool { try LocalMatcher(filter: p.document).matches(doc) }
        #expect(try m(Field("tags") == "a"))
        #expect(try m(Field("tags").isIn(["z", "b"])))
        #expect(try !m(Field("n") == "3"))
        #expect(try m(Field("missing") == JSONValue.null))
        #expect(try m(Field("sub.k") == 2))
        #expect(try m(Field("tags.1") == "b"))
        #expect(try m(Field("n") > 2 && Field("n") <= 3))
        #expect(try !m(Field("missing").exists()))
        #expect(throws: RoostError.self) { try m(Filter(["$where": "1"])) }
        let base: JSONValue = ["a": 1, "b": ["c": 1, "d": 2]]
        #expect(base.merging(patch: ["a": nil, "b": ["c": 5]]) == ["b": ["c": 5, "d": 2]])
    }
}
