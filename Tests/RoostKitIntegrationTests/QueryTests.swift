import Foundation
import Testing
@testable import RoostKit

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
            ("centerSphere", Query(Field("location").within(radius: 3000, of: GeoPoint(-122.47, 37.771))).sorted(by: "name"),
             ["Golden Gate Park", "de Young"]),
            ("polygon", Query(Field("location").within(polygon: [GeoPoint(-123, 37), GeoPoint(-122, 37), GeoPoint(-122.45, 38)])).sorted(by: "name"),
             ["Coit Tower", "Golden Gate Park", "de Young"]),
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
