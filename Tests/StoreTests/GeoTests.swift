import JSON
import Store
import Testing

let places = [
    #"{"_id":"a","location":[0.5,0.5]}"#,
    #"{"_id":"b","location":{"type":"Point","coordinates":[2,2]}}"#,
    #"{"_id":"c","location":[10,10]}"#,
    #"{"_id":"d","name":"Central Park","location":{"type":"Point","coordinates":[-73.97,40.77]}}"#,
    #"{"_id":"e","location":[-73.8,40.8]}"#,
    #"{"_id":"f","location":{"type":"Point","coordinates":[-73.95,40.8]}}"#,
    #"{"_id":"i","location":[0.1,7]}"#,
    #"{"_id":"g","name":"no location"}"#,
    #"{"_id":"h","location":"nowhere"}"#,
    #"{"_id":"j","location":{"type":"Point"}}"#,
    #"{"_id":"k","location":[1]}"#,
    #"{"_id":"l","location":["1","1"]}"#,
]

struct GeoCase: Sendable, CustomTestStringConvertible {
    let filter: String
    let expected: [String]
    /// Whether the order is part of the answer ($nearSphere: nearest first).
    let ordered: Bool
    init(_ filter: String, _ expected: [String], ordered: Bool = false) {
        self.filter = filter
        self.expected = expected
        self.ordered = ordered
    }
    var testDescription: String { filter }
}

let geoCases: [GeoCase] = [
    GeoCase(#"{"location":{"$geoWithin":{"$box":[[0,0],[5,5]]}}}"#, ["a", "b"]),
    GeoCase(#"{"location":{"$geoWithin":{"$box":[[5,5],[0,0]]}}}"#, ["a", "b"]),
    GeoCase(#"{"location":{"$geoWithin":{"$box":[[-74,40],[-73,41]]}}}"#, ["d", "e", "f"]),
    GeoCase(#"{"location":{"$geoWithin":{"$box":[[20,20],[30,30]]}}}"#, []),
    // A point on the edge of the box is inside; 0.1 is not exact in 32-bit floats.
    GeoCase(#"{"location":{"$geoWithin":{"$box":[[0.1,6],[1,8]]}}}"#, ["i"]),
    GeoCase(#"{"location":{"$within":{"$box":[[0,0],[5,5]]}}}"#, ["a", "b"]),
    // 5 miles around Central Park, in radians (miles / 3963.2).
    GeoCase(#"{"location":{"$geoWithin":{"$centerSphere":[[-73.97,40.77],0.0012616067823980622]}}}"#, ["d", "f"]),
    GeoCase(#"{"location":{"$geoWithin":{"$centerSphere":[[0,0],0.1]}}}"#, ["a", "b"]),
    GeoCase(#"{"location":{"$geoWithin":{"$center":[[0,0],3]}}}"#, ["a", "b"]),
    GeoCase(#"{"location":{"$geoWithin":{"$polygon":[[0,0],[3,0],[3,3],[0,3]]}}}"#, ["a", "b"]),
    GeoCase(#"{"location":{"$geoWithin":{"$polygon":[[0,0],[10,0],[0,10]]}}}"#, ["a", "b", "i"]),
    GeoCase(#"{"location":{"$geoWithin":{"$geometry":{"type":"Polygon","coordinates":[[[-74,40.7],[-73.9,40.7],[-73.9,40.85],[-74,40.85],[-74,40.7]]]}}}}"#, ["d", "f"]),
    GeoCase(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-73.97,40.77]},"$maxDistance":10000}}}"#, ["d", "f"], ordered: true),
    GeoCase(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-73.97,40.77]}},"$maxDistance":20000}}"#, ["d", "f", "e"], ordered: true),
    GeoCase(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-73.79,40.81]},"$maxDistance":20000}}}"#, ["e", "f", "d"], ordered: true),
    GeoCase(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-73.97,40.77]},"$minDistance":1000,"$maxDistance":20000}}}"#, ["f", "e"], ordered: true),
    GeoCase(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[0,0]}},"$maxDistance":400000}}"#, ["a", "b"], ordered: true),
    GeoCase(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[0,0]}},"$maxDistance":10}}"#, [], ordered: true),
    // Geo conditions combine with ordinary ones.
    GeoCase(#"{"name":"Central Park","location":{"$geoWithin":{"$box":[[-74,40],[-73,41]]}}}"#, ["d"]),
    GeoCase(#"{"$or":[{"location":{"$geoWithin":{"$box":[[0,0],[1,1]]}}},{"_id":"c"}]}"#, ["a", "c"]),
]

@Suite("Geo queries")
struct GeoTests {
    @Test("geo operators answer the same with and without a geo index", arguments: geoCases)
    func geo(_ example: GeoCase) throws {
        let store = try TestStore()
        // `places` holds non-points too, as rows stored before GeoPointCheck can: the index ignores them.
        store.writer.checksGeoPoints = false
        try store.insert("plain", places)
        try store.insert("indexed", places)
        try store.index("indexed", ["location:geo"])
        try store.index("indexedFirst", ["location:geo"])
        try store.insert("indexedFirst", places)
        for collection in ["plain", "indexed", "indexedFirst"] {
            let found = try store.ids(collection, example.filter)
            if example.ordered {
                #expect(found == example.expected, "\(collection) \(example.filter)")
            } else {
                #expect(Set(found) == Set(example.expected), "\(collection) \(example.filter)")
            }
            #expect(try store.reader.count(collection, filter: json(example.filter)) == example.expected.count)
        }
    }

    @Test("the query planner uses the R*Tree for an indexed $box and the value index for an indexed equality")
    func plans() throws {
        let store = try TestStore()
        try store.insert("c", places)
        try store.index("c", ["location:geo", "name"])
        let box = try store.reader.plan("c", filter: json(#"{"location":{"$geoWithin":{"$box":[[0,0],[5,5]]}}}"#))
        #expect(box.contains { $0.contains("g_") }, "\(box)")
        let near = try store.reader.plan("c", filter: json(#"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[0,0]},"$maxDistance":1000}}}"#))
        #expect(near.contains { $0.contains("g_") }, "\(near)")
        let equality = try store.reader.plan("c", filter: json(#"{"name":"Central Park"}"#))
        #expect(equality.contains { $0.contains("x_") }, "\(equality)")
        let range = try store.reader.plan("c", filter: json(#"{"name":{"$gt":"A"}}"#))
        #expect(range.contains { $0.contains("x_") }, "\(range)")
        let inList = try store.reader.plan("c", filter: json(#"{"name":{"$in":["A","Central Park"]}}"#))
        #expect(inList.contains { $0.contains("x_") }, "\(inList)")

        // Without indexes, neither table appears.
        try store.insert("bare", places)
        let bare = try store.reader.plan("bare", filter: json(#"{"location":{"$geoWithin":{"$box":[[0,0],[5,5]]}},"name":"x"}"#))
        #expect(!bare.contains { $0.contains("g_") || $0.contains("x_") }, "\(bare)")
    }

    @Test("$nearSphere orders nearest first unless a sort is given, and pages")
    func nearOrdering() throws {
        let store = try TestStore()
        try store.insert("c", places)
        let filter = #"{"location":{"$nearSphere":{"$geometry":{"type":"Point","coordinates":[-73.97,40.77]}},"$maxDistance":20000}}"#
        #expect(try store.find("c", filter, limit: 2).map { $0["_id"]!.stringValue! } == ["d", "f"])
        #expect(try store.find("c", filter, skip: 1).map { $0["_id"]!.stringValue! } == ["f", "e"])
        #expect(try store.ids("c", filter, sort: [("_id", false)]) == ["f", "e", "d"])
    }
}
