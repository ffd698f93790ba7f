import RoostTestSupport
import Foundation
import Testing

/// Replays the requests the "Tour My Town" iOS client makes (../shared/seeds),
/// against a real roostd, with and without the indexes the example config declares.
@Suite struct SeedClientTests {
    static let indexedConfig = """
        collections:
          locations:
            permission: public
            indexes: [name, categories, "location:geo"]
        """

    @Test(arguments: [nil, indexedConfig])
    func tourMyTownFlow(config: String?) throws {
        let roost = try RoostProcess(config: config)
        let base = roost.baseURL
        let accept = ["Accept": "application/json"]

        // import: GET /locations with Accept: application/json
        let empty = try HTTP.send("GET", "\(base)/locations", headers: accept)
        #expect(empty.status == 200)
        #expect(empty.text == "[]")

        // persist: POST new locations
        let places: [[String: Any]] = [
            ["name": "Golden Gate Park", "placename": "SF", "location": [-122.4862, 37.7694], "details": "big park", "categories": ["Park", "Nature"]],
            ["name": "Exploratorium", "placename": "SF", "location": [-122.3987, 37.8017], "details": "science", "categories": ["Museum"]],
            ["name": "Louvre", "placename": "Paris", "location": [2.3376, 48.8606], "details": "art", "categories": ["Museum", "Art"]],
        ]
        var ids: [String] = []
        for place in places {
            let created = try HTTP.json("POST", "\(base)/locations", place)
            #expect(created.status == 201)
            let id = try #require(created.object["_id"] as? String)
            #expect(created.object["name"] as? String == place["name"] as? String)
            #expect((created.object["_createdAt"] as? String)?.hasSuffix("Z") == true)
            ids.append(id)
        }

        // persist: PUT an existing location (the client sends the whole object back)
        var edited = places[0]
        edited["_id"] = ids[0]
        edited["details"] = "the biggest park"
        let put = try HTTP.json("PUT", "\(base)/locations/\(ids[0])", edited)
        #expect(put.status == 200)
        #expect(put.object["details"] as? String == "the biggest park")
        let fetched = try HTTP.send("GET", "\(base)/locations/\(ids[0])", headers: accept)
        #expect(fetched.object["details"] as? String == "the biggest park")

        // list
        let all = try HTTP.send("GET", "\(base)/locations", headers: accept)
        #expect(all.array.count == 3)

        // queryRegion: the $box query, formatted with %f and escaped as the client does
        let (x0, y0, x1, y1) = (-122.6, 37.6, -122.3, 37.9)
        let box = String(format: "{\"location\":{\"$geoWithin\":{\"$box\":[[%f,%f],[%f,%f]]}}}", x0, y0, x1, y1)
        let inBox = try HTTP.send("GET", "\(base)/locations?query=\(HTTP.iosEscape(box))", headers: accept)
        #expect(inBox.status == 200)
        #expect(Set(inBox.array.compactMap { $0["name"] as? String }) == ["Golden Gate Park", "Exploratorium"])

        // Categories query: $in on an array field means overlap
        let categories = "{\"categories\":{\"$in\":[\"Museum\",\"Zoo\"]}}"
        let museums = try HTTP.send("GET", "\(base)/locations?query=\(HTTP.iosEscape(categories))", headers: accept)
        #expect(museums.status == 200)
        #expect(Set(museums.array.compactMap { $0["name"] as? String }) == ["Exploratorium", "Louvre"])

        // The same query sent with the characters left unescaped, as the tutorial's
        // Categories.m actually does (its escape set lands in the "leave alone" argument).
        let raw = categories.replacingOccurrences(of: "\"", with: "%22")
        let rawResult = try HTTP.send("GET", "\(base)/locations?query=\(raw)", headers: accept)
        #expect(rawResult.array.count == 2)

        // _count agrees with the list
        let count = try HTTP.send("GET", "\(base)/locations/_count?query=\(HTTP.iosEscape(categories))")
        #expect(count.object["count"] as? Int == 2)
        roost.stop()
    }

    @Test func browserGetsAnEscapedHTMLTable() throws {
        let roost = try RoostProcess()
        _ = try HTTP.json("POST", "\(roost.baseURL)/notes", ["title": "<script>alert(1)</script>"])
        let page = try HTTP.send("GET", "\(roost.baseURL)/notes", headers: ["Accept": "text/html,application/xhtml+xml,*/*;q=0.8"])
        #expect(page.status == 200)
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.text.contains("<script>alert"))
        let home = try HTTP.send("GET", "\(roost.baseURL)/")
        #expect(home.status == 200)
        #expect(home.text.contains("notes"))
    }

    @Test func sortLimitSkipFieldsAndTotal() throws {
        let roost = try RoostProcess()
        for (i, name) in ["delta", "alpha", "charlie", "bravo"].enumerated() {
            _ = try HTTP.json("POST", "\(roost.baseURL)/things", ["name": name, "rank": i, "secret": true])
        }
        let sort = HTTP.iosEscape("{\"name\":1}")
        let page = try HTTP.send("GET", "\(roost.baseURL)/things?sort=\(sort)&limit=2&skip=1&fields=name&count=true")
        #expect(page.status == 200)
        #expect(page.array.map { $0["name"] as? String } == ["bravo", "charlie"])
        #expect(page.array.allSatisfy { $0["secret"] == nil && $0["_id"] != nil })
        #expect(page.header("X-Total-Count") == "4")
        let desc = try HTTP.send("GET", "\(roost.baseURL)/things?sort=\(HTTP.iosEscape("{\"rank\":-1}"))&limit=1")
        #expect(desc.array.first?["name"] as? String == "bravo")
    }
}
