import JSON
import Store
import Testing

let sortDocuments = [
    #"{"_id":"n3","n":3,"g":"b"}"#,
    #"{"_id":"n1","n":1,"g":"a"}"#,
    #"{"_id":"n2","n":2,"g":"b"}"#,
    #"{"_id":"n25","n":2.5,"g":"a"}"#,
    #"{"_id":"sb","n":"b","g":"a"}"#,
    #"{"_id":"sa","n":"a","g":"b"}"#,
    #"{"_id":"nul","n":null,"g":"a"}"#,
    #"{"_id":"mis","g":"b"}"#,
    #"{"_id":"t","n":true,"g":"a"}"#,
    #"{"_id":"f","n":false,"g":"b"}"#,
    #"{"_id":"obj","n":{"x":1},"g":"a"}"#,
]

@Suite("Sort, limit, skip and fields")
struct FindOptionsTests {
    func store() throws -> TestStore {
        let store = try TestStore()
        try store.insert("c", sortDocuments)
        return store
    }

    @Test("ascending sort follows MongoDB's order across types")
    func ascending() throws {
        let ids = try store().ids("c", "{}", sort: [("n", true)])
        #expect(Set(ids.prefix(2)) == ["nul", "mis"], "\(ids)")
        #expect(Array(ids.dropFirst(2)) == ["n1", "n2", "n25", "n3", "sa", "sb", "obj", "f", "t"])
    }

    @Test("descending sort reverses it")
    func descending() throws {
        let ids = try store().ids("c", "{}", sort: [("n", false)])
        #expect(Array(ids.prefix(9)) == ["t", "f", "obj", "sb", "sa", "n3", "n25", "n2", "n1"])
        #expect(Set(ids.suffix(2)) == ["nul", "mis"], "\(ids)")
    }

    @Test("later sort keys break ties of earlier ones")
    func compound() throws {
        let ids = try store().ids("c", "{}", sort: [("g", true), ("n", false)])
        #expect(ids == ["t", "obj", "sb", "n25", "n1", "nul", "f", "sa", "n3", "n2", "mis"])
        let byID = try store().ids("c", "{}", sort: [("_id", true)])
        #expect(byID == ["f", "mis", "n1", "n2", "n25", "n3", "nul", "obj", "sa", "sb", "t"])
    }

    @Test("sort applies to the filtered set; skip and limit page through it")
    func paging() throws {
        let s = try store()
        let numbers = #"{"n":{"$type":"number"}}"#
        func page(skip: Int, limit: Int) throws -> [String] {
            try s.find("c", numbers, sort: [("n", true)], limit: limit, skip: skip).map { $0["_id"]!.stringValue! }
        }
        #expect(try page(skip: 0, limit: 10) == ["n1", "n2", "n25", "n3"])
        #expect(try page(skip: 1, limit: 2) == ["n2", "n25"])
        #expect(try page(skip: 3, limit: 2) == ["n3"])
        #expect(try page(skip: 4, limit: 2) == [])
        #expect(try page(skip: 0, limit: 0) == [])
        // Without a sort, documents come in insertion order.
        #expect(try s.find("c", "{}", limit: 3).map { $0["_id"]!.stringValue! } == ["n3", "n1", "n2"])
        #expect(try s.find("c", "{}", limit: 2, skip: 9).map { $0["_id"]!.stringValue! } == ["f", "obj"])
    }

    @Test("fields keeps the named top-level fields and _id, with their JSON types")
    func projection() throws {
        let s = try TestStore()
        try s.insert("c", [
            #"{"_id":"p1","name":"x","flag":true,"off":false,"obj":{"k":[1,2],"b":true},"arr":[1,"a",true,null],"nul":null,"s":"true","num":1.5,"big":12345678901,"other":1}"#,
            #"{"_id":"p2","other":2}"#,
        ])
        let rows = try s.find("c", #"{"_id":"p1"}"#, fields: ["flag", "off", "obj", "arr", "nul", "s", "num", "big", "missing"])
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(Set(row.keys) == ["_id", "flag", "off", "obj", "arr", "nul", "s", "num", "big"])
        #expect(row["_id"] == .string("p1"))
        #expect(row["flag"] == .bool(true))
        #expect(row["off"] == .bool(false))
        #expect(row["obj"] == json(#"{"k":[1,2],"b":true}"#))
        #expect(row["arr"] == json(#"[1,"a",true,null]"#))
        #expect(row["nul"] == .null)
        #expect(row["s"] == .string("true"))
        #expect(row["num"] == .double(1.5))
        #expect(row["big"] == .int(12_345_678_901))

        let onlyID = try s.find("c", "{}", fields: [])
        #expect(onlyID.map(\.jsonText) == [#"{"_id":"p1"}"#, #"{"_id":"p2"}"#])
        let some = try s.find("c", "{}", sort: [("_id", false)], fields: ["name"])
        #expect(some.map(\.jsonText) == [#"{"_id":"p2"}"#, #"{"_id":"p1","name":"x"}"#])
        // Without fields, the whole stored document comes back, with its timestamps.
        let whole = try #require(try s.find("c", #"{"_id":"p2"}"#).first)
        #expect(whole["other"] == .int(2))
        #expect(whole["_createdAt"]?.stringValue != nil)
    }
}
