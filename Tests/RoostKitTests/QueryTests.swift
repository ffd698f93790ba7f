import Foundation
import Testing
@testable import RoostKit

@Suite("Query builder") struct QueryBuilder {
    @Test("filters produce Roost's MongoDB filters")
    func filters() throws {
        #expect((Field("name") == "Park").json == #"{"name":{"$eq":"Park"}}"#)
        #expect((Field("age") >= 18 && Field("age") < 65).json == #"{"$and":[{"age":{"$gte":18}},{"age":{"$lt":65}}]}"#)
        #expect((Field("a") == 1 && Field("b") != 2).json == #"{"a":{"$eq":1},"b":{"$ne":2}}"#)
        #expect(Field("tags").isIn(["x", "y"]).json == #"{"tags":{"$in":["x","y"]}}"#)
        #expect(Field("name").matches("^gold", options: "i").json == #"{"name":{"$options":"i","$regex":"^gold"}}"#)
        #expect((Field("a") == 1 || Field("b") == 2).json == #"{"$or":[{"a":{"$eq":1}},{"b":{"$eq":2}}]}"#)
        #expect(Field("location").within(box: GeoPoint(-123, 37), GeoPoint(-122, 38)).json
                == #"{"location":{"$geoWithin":{"$box":[[-123,37],[-122,38]]}}}"#)
        #expect(Field("location").near(GeoPoint(-122.5, 37.5), maxDistance: 1000).json
                == #"{"location":{"$nearSphere":{"$geometry":{"coordinates":[-122.5,37.5],"type":"Point"},"$maxDistance":1000}}}"#)
        let q = Query(Field("x") > 1).sorted(by: "name").sorted(by: "_createdAt", ascending: false).limit(5).skip(10).resolving("ref")
        #expect(q.sortJSON == #"{"name":1,"_createdAt":-1}"#)
        #expect(q.parameters.map(\.0) == ["query", "sort", "limit", "skip", "resolve"])
    }

    @Test("URLs escape ids and query text")
    func urls() {
        let client = RoostClient(baseURL: URL(string: "http://h:1/")!)
        let url = client.url(["notes", "u1:a/b c"], query: [("query", #"{"a":"+&="}"#)])
        #expect(url.absoluteString == "http://h:1/notes/u1:a%2Fb%20c?query=%7B%22a%22:%22%2B%26%3D%22%7D")
    }
}

extension AgainstRoostd {
    @Suite("Queries") struct Queries {
        static let places: [Location] = [
            Location(name: "Golden Gate Park", location: [-122.4862, 37.7694], categories: ["Park"]),
            Location(name: "Coit Tower", location: [-122.4058, 37.8024], categories: ["Landmark"]),
            Location(name: "de Young", location: [-122.4686, 37.7715], categories: ["Museum", "Park"]),
            Location(name: "Central Park", location: [-73.9654, 40.7829], categories: ["Park"]),
            Location(name: "MoMA", location: [-73.9776, 40.7614], categories: ["Museum"]),
        ]

        static let cases: [(String, Query, [String])] = [
            ("equality", Query(Field("name") == "MoMA"), ["MoMA"]),
            ("$in on an array", Query(Field("categories").isIn(["Museum"])).sorted(by: "name"), ["MoMA", "de Young"]),
            ("$regex with options", Query(Field("name").matches("park$", options: "i")).sorted(by: "name"), ["Central Park", "Golden Gate Park"]),
            ("range", Query(Field("location.1") > 40.77).sorted(by: "name"), ["Central Park"]),
            ("geo box", Query(Field("location").within(box: GeoPoint(-123, 37), GeoPoint(-122, 38))).sorted(by: "name", ascending: false),
             ["de Young", "Golden Gate Park", "Coit Tower"]),
            ("nearSphere", Query(Field("location").near(GeoPoint(-122.47, 37.771), maxDistance: 2500)), ["de Young", "Golden Gate Park"]),
            ("sort, skip, limit", Query().sorted(by: "name").skip(1).limit(2), ["Coit Tower", "Golden Gate Park"]),
            ("or", Query(Field("name") == "MoMA" || Field("categories").containsAll(["Museum", "Park"])).sorted(by: "name"), ["MoMA", "de Young"]),
        ]

        @Test("the server and the offline mirror answer the same queries")
        func serverAndMirrorAgree() async throws {
            let fx = try Fixture()
            let alice = try await fx.user("alice")
            let locations = alice.collection("locations", of: Location.self)
            for place in Self.places { _ = try await locations.create(place) }
            let store = try OfflineStore(client: alice, url: fx.storeURL("alice"), mirrors: [Mirror("locations")])
            try await store.sync()
            let local = store.collection("locations", of: Location.self)
            for (name, query, expected) in Self.cases {
                let remote = try await locations.find(query).map(\.value.name)
                #expect(remote == expected, "server: \(name)")
                let mirrored = try await local.find(query).map(\.value.name)
                #expect(mirrored == expected, "mirror: \(name)")
            }
        }
    }
}
