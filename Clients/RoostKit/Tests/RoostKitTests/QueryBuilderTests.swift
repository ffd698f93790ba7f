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
