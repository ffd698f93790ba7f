import Foundation
import Testing
@testable import RoostKit

/// What RoostKit sends, checked without a server.
@Suite("Wire format") struct WireFormatTests {
    struct Place: Codable, Equatable { var location: GeoPoint }

    @Test("a GeoPoint encodes as [lng, lat] and decodes from that, GeoJSON, or 0.2.0's object")
    func geoPoint() throws {
        let data = try JSONEncoder().encode(Place(location: GeoPoint(-122.5, 37.5)))
        #expect(String(decoding: data, as: UTF8.self) == #"{"location":[-122.5,37.5]}"#)
        for text in [#"{"location":[-122.5,37.5]}"#,
                     #"{"location":{"type":"Point","coordinates":[-122.5,37.5]}}"#,
                     #"{"location":{"longitude":-122.5,"latitude":37.5}}"#] {
            #expect(try JSONDecoder().decode(Place.self, from: Data(text.utf8)) == Place(location: GeoPoint(-122.5, 37.5)))
        }
    }

    @Test("geo builders, keyset cursor and batch operations")
    func builders() throws {
        let circle = Field("location").within(radius: 6_378.1, of: GeoPoint(1, 2)).json
        #expect(circle == #"{"location":{"$geoWithin":{"$centerSphere":[[1,2],0.001]}}}"#)
        #expect(Field("location").within(polygon: [GeoPoint(0, 0), GeoPoint(1, 0), GeoPoint(0, 1)]).json
                == #"{"location":{"$geoWithin":{"$polygon":[[0,0],[1,0],[0,1]]}}}"#)
        let q = Query().sorted(by: "name").limit(2).after("c1")
        #expect(q.parameters.map(\.0) == ["sort", "limit", "after"])
        #expect(BatchOperation.patch("notes", "u1:a/b", ["x": 1], condition: .unchanged(etag: "\"e\"")).json
                == ["method": "PATCH", "path": "/notes/u1:a%2Fb", "body": ["x": 1], "headers": ["If-Match": "\"e\""]])
        #expect(BatchOperation.delete("notes", "n1").json == ["method": "DELETE", "path": "/notes/n1"])
    }

    @Test("the local matcher evaluates $centerSphere and $polygon")
    func localGeo() throws {
        let doc: JSONValue = ["p": [0.5, 0.5]]
        func m(_ f: Filter) throws -> Bool { try LocalMatcher(filter: f.document).matches(doc) }
        #expect(try m(Field("p").within(polygon: [GeoPoint(0, 0), GeoPoint(1, 0), GeoPoint(1, 1), GeoPoint(0, 1)])))
        #expect(try !m(Field("p").within(polygon: [GeoPoint(0, 0), GeoPoint(1, 0), GeoPoint(1, 0.4)])))
        #expect(try m(Field("p").within(radius: 80_000, of: GeoPoint(0, 0))))
        #expect(try !m(Field("p").within(radius: 70_000, of: GeoPoint(0, 0))))
    }
}
