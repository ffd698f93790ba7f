import JSON
import Store
import StoreSQLite
import Testing

/// Which plan a list gets (issue #22), table-driven: the answers themselves
/// are checked against a reference in tests/python/test_query_plans.py.
@Suite("List plans")
struct ListPlanTests {
    func store() throws -> TestStore {
        let store = try TestStore()
        try store.index("c", ["n", "g"])
        try store.users(["u0", "u1"])
        try store.insert("c", (0..<300).map { i in
            #"{"n":\#(i % 17),"g":"\#(i % 3)","s":\#(i),"_acl":{"read":["u\#(i % 2)"]}}"#
        })
        return store
    }

    static let cases: [(scope: AccessScope, filter: String, sort: [(field: String, ascending: Bool)], strategy: String)] = [
        (.system, "{}", [("n", true)], "index-walk"),
        (.system, "{}", [("n", false), ("s", true)], "index-walk"),
        (.system, #"{"n":{"$gt":4}}"#, [], "index-walk"),
        (.system, #"{"n":{"$gt":4},"s":{"$lt":9}}"#, [], "index-walk"),
        (.system, #"{"n":{"$gt":4},"g":"1"}"#, [], "scan"),
        (.system, "{}", [("_updatedAt", false)], "index-walk"),
        (.system, "{}", [("s", true)], "scan"),
        (.system, #"{"g":"1"}"#, [], "index-lookup"),
        (.system, #"{"g":"1"}"#, [("n", true)], "scan"),
        // A private read never walks a value index: where it meets rows the
        // caller cannot read would show in its timing.
        (AccessScope(principal: .user("u1"), level: .private), "{}", [("n", true)], "scan"),
        (AccessScope(principal: .user("u1"), level: .private), #"{"n":{"$gt":4}}"#, [], "scan"),
        (AccessScope(principal: .user("u1"), level: .shared), "{}", [("n", true)], "index-walk"),
    ]

    @Test("each query shape gets its plan", arguments: cases.indices)
    func strategy(_ i: Int) throws {
        let c = Self.cases[i]
        let plan = try store().reader.explain("c", FindQuery(filter: json(c.filter), sort: c.sort, limit: 20), scope: c.scope)
        #expect(plan.objectValue?["strategy"] == .string(c.strategy), "\(c.filter) \(c.sort): \(plan.jsonText)")
    }

    @Test("a private read starts from the caller's own rows and keeps up with _acl changes")
    func privateReadsStartFromOwnRows() throws {
        let s = try store()
        let me = AccessScope(principal: .user("u1"), level: .private)
        let plan = try s.reader.explain("c", FindQuery(sort: [("n", true)], limit: 20), scope: me)
        let lines = plan.objectValue?["statements"]?.arrayValue?.flatMap { $0.objectValue?["plan"]?.arrayValue ?? [] }.compactMap(\.stringValue) ?? []
        #expect(lines.contains { $0.contains("a_1") }, "\(lines)")
        #expect(try s.reader.count("c", filter: json("{}"), scope: me) == 150)
        // u0's row shared with u1, then taken back.
        let shared = try s.find("c", #"{"s":0}"#)[0]
        let id = shared["_id"]!.stringValue!
        let writer = s.writer
        for read in [#"["u1"]"#, "[]"] {
            let patch = object(#"{"_acl":{"read":\#(read)}}"#)
            for r in writer.commitBatch([{ w in try w.patch(in: "c", id: id, patch, scope: .system) }]) { _ = try r.get() }
            let seen = try s.reader.find("c", FindQuery(filter: json(#"{"s":0}"#)), scope: me).count
            #expect(seen == (read == "[]" ? 0 : 1))
        }
    }

    @Test("a walk's statements search an index and sort nothing")
    func walkUsesTheIndex() throws {
        let plan = try store().reader.explain("c", FindQuery(filter: json(#"{"n":{"$gte":3,"$lt":9}}"#), sort: [("n", false)], limit: 20))
        let lines = plan.objectValue?["statements"]?.arrayValue?.flatMap { $0.objectValue?["plan"]?.arrayValue ?? [] }.compactMap(\.stringValue) ?? []
        #expect(lines.contains { $0.contains("USING INDEX c_1_s_") }, "\(lines)")
        #expect(!lines.contains { $0.contains("TEMP B-TREE") }, "\(lines)")
    }

    @Test("keyset pages of every plan join up to the whole list", arguments: [
        ("{}", [("n", true)] as [(field: String, ascending: Bool)]),
        (#"{"n":{"$lte":8}}"#, []), ("{}", [("s", false)]), ("{}", []), (#"{"g":"2"}"#, []),
    ])
    func keyset(_ filter: String, _ sort: [(field: String, ascending: Bool)]) throws {
        let s = try store()
        let whole = try s.reader.find("c", FindQuery(filter: json(filter), sort: sort, limit: 1000))
        var paged: [String] = []
        var after: String?
        repeat {
            let page = try s.reader.page("c", FindQuery(filter: json(filter), sort: sort, limit: 13, after: after), withTotal: false)
            paged += page.documents
            after = page.next
        } while after != nil
        #expect(paged == whole)
    }
}
