import JSON
import RoostTestSupport
import Store
import Testing

/// The `geo-walk` plan (points in row order inside a window of row ids, then
/// the R*Tree's matches past it) answers exactly what the same filter
/// answers on a collection without a geo index, in the same order, page by
/// page, with windows small enough that every page crosses them.
@Suite("Geo walk")
struct GeoWalkTests {
    /// Two collections written alike (inserts, deletes that leave gaps in the
    /// row ids, updates that move, add and remove points); only `indexed` has the geo index.
    func store(seed: UInt64) throws -> TestStore {
        let s = try TestStore()
        try s.index("indexed", ["loc:geo", "n"])
        var random = SeededGenerator(seed: seed)
        var documents: [String] = []
        for i in 0..<400 {
            let x = Double(Int.random(in: 0...1000, using: &random)) / 100, y = Double(Int.random(in: 0...1000, using: &random)) / 100
            let n = Int.random(in: 0..<10, using: &random)
            switch i % 7 {
            case 0: documents.append(#"{"_id":"d\#(i)","n":\#(n)}"#)
            case 1: documents.append(#"{"_id":"d\#(i)","n":\#(n),"loc":{"type":"Point","coordinates":[\#(x),\#(y)]}}"#)
            default: documents.append(#"{"_id":"d\#(i)","n":\#(n),"loc":[\#(x),\#(y)]}"#)
            }
        }
        for collection in ["plain", "indexed"] {
            try s.insert(collection, documents)
            for i in stride(from: 3, to: 400, by: 11) { try s.writer.delete(from: collection, id: "d\(i)") }
            for i in stride(from: 5, to: 400, by: 13) {
                let moved = i % 2 == 0 ? #"{"n":1,"loc":[\#(Double(i % 10)),5.5]}"# : #"{"n":2}"#
                _ = try s.writer.replace(in: collection, id: "d\(i)", object(moved))
            }
        }
        return s
    }

    static let filters = [
        #"{"loc":{"$geoWithin":{"$box":[[0,0],[10,10]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[2,2],[6,7]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[9.5,9.5],[10,10]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[20,20],[30,30]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[1,5.5],[4,5.5]]}}}"#,
        #"{"loc":{"$geoWithin":{"$box":[[1,1],[8,8]]}},"n":{"$in":[1,3]}}"#,
        #"{"loc":{"$geoWithin":{"$center":[[5,5],2.5]}}}"#,
        #"{"loc":{"$geoWithin":{"$centerSphere":[[5,5],0.03]}}}"#,
        #"{"loc":{"$geoWithin":{"$polygon":[[0,0],[9,1],[4,8]]}}}"#,
        #"{"$or":[{"loc":{"$geoWithin":{"$box":[[0,0],[3,3]]}}},{"n":7}]}"#,
    ]

    @Test("pages of a geo walk match the unindexed answer", arguments: filters)
    func pages(_ filter: String) throws {
        let s = try store(seed: UInt64(filter.utf8.count))
        s.reader.geoWindowMinimum = 9
        s.reader.geoWindowPerRow = 1
        func ids(_ documents: [String]) -> [String] { documents.map { object($0)["_id"]?.stringValue ?? "?" } }
        let whole = ids(try s.reader.find("plain", FindQuery(filter: json(filter), limit: 1000)))
        #expect(whole.count > 0 || filter.contains("20,20"))
        #expect(ids(try s.reader.find("indexed", FindQuery(filter: json(filter), limit: 1000))) == whole)
        for size in [1, 4, 25] {
            var paged: [String] = []
            var after: String?
            repeat {
                let page = try s.reader.page("indexed", FindQuery(filter: json(filter), limit: size, after: after), withTotal: false)
                paged += ids(page.documents)
                after = page.next
            } while after != nil
            #expect(paged == whole, "keyset pages of \(size)")
            for skip in [size, whole.count / 3, whole.count - 1] where skip >= 0 {
                let page = ids(try s.reader.find("indexed", FindQuery(filter: json(filter), limit: size, skip: skip)))
                #expect(page == Array(whole.dropFirst(skip).prefix(size)), "skip \(skip), limit \(size)")
            }
        }
    }

    @Test("an unsorted top-level $geoWithin is a geo walk on the points table; nested or sorted ones are not")
    func strategy() throws {
        let s = try store(seed: 1)
        func strategy(_ filter: String, sort: [(field: String, ascending: Bool)] = []) throws -> String? {
            try s.reader.explain("indexed", FindQuery(filter: json(filter), sort: sort, limit: 20)).objectValue?["strategy"]?.stringValue
        }
        #expect(try strategy(Self.filters[1]) == "geo-walk")
        #expect(try strategy(Self.filters[6]) == "geo-walk")
        #expect(try strategy(Self.filters[9]) != "geo-walk")
        #expect(try strategy(Self.filters[1], sort: [("n", true)]) != "geo-walk")
        let plan = try s.reader.explain("indexed", FindQuery(filter: json(Self.filters[1]), limit: 20))
        let lines = plan.objectValue?["statements"]?.arrayValue?.first?.objectValue?["plan"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(lines.first?.contains("SEARCH w USING INTEGER PRIMARY KEY") == true, "\(lines)")
        #expect(!lines.contains { $0.contains("TEMP B-TREE") }, "\(lines)")
    }
}
