import JSON
import RoostTestSupport
import Store
import StoreSQLite
import Testing

/// `FilterMatcher` against SQLite: the same filters run as the SQL the
/// compiler makes (through `DocumentReader.find`, as a list runs them, and
/// through the live probe) must select exactly the documents the in-memory
/// matcher selects.
@Suite("FilterMatcher agrees with the SQL compiler")
struct FilterMatcherTests {
    /// Cases where a plausible in-memory matcher would go wrong: each states
    /// the answer, which SQL and the matcher must both give.
    static let seeds: [(filter: String, document: String, matches: Bool)] = [
        (#"{"s": "\u00e9"}"#, #"{"s": "e\u0301"}"#, false), // bytes, not canonical equivalence
        (#"{"s": {"$gt": "e"}}"#, #"{"s": "é"}"#, true),
        (#"{"n": 9007199254740993}"#, #"{"n": 9007199254740992.0}"#, false), // integer against real, exactly
        (#"{"n": {"$gt": 9007199254740992.0}}"#, #"{"n": 9007199254740993}"#, true),
        (#"{"n": {"$lt": 9223372036854775807}}"#, #"{"n": 9.3e18}"#, false),
        (#"{"a": null}"#, #"{}"#, true),
        (#"{"a": null}"#, #"{"a": []}"#, false),
        (#"{"a": null}"#, #"{"a": [1, null]}"#, true),
        (#"{"a.b": null}"#, #"{"a": [1, 2]}"#, false), // an array of non-documents yields no value
        (#"{"a.b": null}"#, #"{"a": 5}"#, true),
        (#"{"a.b": null}"#, #"{"a": [{"c": 1}]}"#, true),
        (#"{"a.0": 1}"#, #"{"a": [1, 2]}"#, true),
        (#"{"a.0": 1}"#, #"{"a": [[1], 2]}"#, false), // by position at the end: not expanded
        (#"{"a.0": 1}"#, #"{"a": {"0": 1}}"#, true),
        (#"{"a.0.b": 1}"#, #"{"a": [{"b": [1]}]}"#, true),
        (#"{"a": {"$elemMatch": {"p": 1}}}"#, #"{"a": ["{\"p\":1}"]}"#, false), // JSON text in a string is no document
        (#"{"o.p": 1}"#, #"{"o": "{\"p\":1}"}"#, false),
        (#"{"a": {"$elemMatch": {"$gt": 1}}}"#, #"{"a": [0, 2]}"#, true),
        (#"{"a": {"$elemMatch": {"$gt": 1}}}"#, #"{"a": 2}"#, false),
        (#"{"loc": {"$geoWithin": {"$box": [[0, 0], [2, 2]]}}}"#, #"{"loc": [true, 1]}"#, true), // json_extract makes true 1
        (#"{"loc": {"$geoWithin": {"$box": [[0, 0], [2, 2]]}}}"#, #"{"loc": {"coordinates": {"0": 1, "1": 1}}}"#, false),
        (#"{"n": {"$mod": [-1, 0]}}"#, #"{"n": -9223372036854775808}"#, true),
        (#"{"n": {"$mod": [2, 1]}}"#, #"{"n": 3.9}"#, true),
        (#"{"n": {"$mod": [2, 1]}}"#, #"{"n": -3.5}"#, false),
        (#"{"n": {"$mod": [2, -1]}}"#, #"{"n": -3.5}"#, true),
        (#"{"n": {"$mod": [2, 1]}}"#, #"{"n": 1e300}"#, true), // saturates at 2^63 - 1
        (#"{"a": [1, 2.0]}"#, #"{"a": [1, 2]}"#, true),
        (#"{"a": {"x": 1, "y": 2}}"#, #"{"a": {"y": 2, "x": 1}}"#, false), // documents compare in key order
        (#"{"b": {"$gte": null}}"#, #"{}"#, true),
        (#"{"b": {"$gt": null}}"#, #"{}"#, false),
        (#"{"b": {"$lt": true}}"#, #"{"b": false}"#, true),
        (#"{"b": {"$lt": true}}"#, #"{"b": 0}"#, false),
        (#"{"b": {"$regex": "^É", "$options": "i"}}"#, #"{"b": "été"}"#, true),
        (#"{"b": {"$regex": "a.b"}}"#, #"{"b": "a\nb"}"#, false),
        (#"{"b": {"$regex": "a.b", "$options": "s"}}"#, #"{"b": "a\nb"}"#, true),
        (#"{"b": {"$regex": "^b$", "$options": "m"}}"#, #"{"b": "a\nb"}"#, true),
        (#"{"b": {"$regex": "\\w"}}"#, #"{"b": "日"}"#, true), // PCRE2_UCP
        (#"{"b": {"$type": "number"}}"#, #"{"b": true}"#, false),
        (#"{"b": {"$exists": false}}"#, #"{"b": null}"#, false),
        (#"{"b": {"$size": 2}}"#, #"{"b": [[1, 2]]}"#, false),
        (#"{"b": {"$size": 2}}"#, #"{"b": [1, 2]}"#, true),
        (#"{"t": {"$all": ["red", "blue"]}}"#, #"{"t": ["blue", "red", "x"]}"#, true),
        (#"{"b": {"$ne": 1}}"#, #"{"b": [1, 2]}"#, false),
        (#"{"b": {"$nin": []}}"#, #"{}"#, true),
        (#"{"b": {"$in": []}}"#, #"{}"#, false),
        (#"{"$nor": [{"b": 1}]}"#, #"{}"#, true),
        (#"{"b": {"$not": {"$gt": 5}}}"#, #"{"b": "x"}"#, true),
        (#"{"loc": {"$nearSphere": [0, 0], "$maxDistance": 200000}}"#, #"{"loc": {"type": "Point", "coordinates": [1, 1]}}"#, true),
        (#"{"loc": {"$nearSphere": [0, 0], "$maxDistance": 100000}}"#, #"{"loc": [1, 1]}"#, false),
        (#"{"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0,0],[10,0],[10,10],[0,10]], [[4,4],[6,4],[6,6],[4,6]]]}}}}"#,
         #"{"loc": [5, 5]}"#, false),
        (#"{"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0,0],[10,0],[10,10],[0,10]], [[4,4],[6,4],[6,6],[4,6]]]}}}}"#,
         #"{"loc": [1, 1]}"#, true),
        (#"{"loc": {"$geoWithin": {"$centerSphere": [[0, 0], 0.1]}}}"#, #"{"loc": [5, 1]}"#, true),
        (#"{"loc": {"$geoWithin": {"$center": [[0, 0], 1]}}}"#, #"{"loc": [1, 0]}"#, true),
        (#"{"a.b": {"$exists": true}}"#, #"{"a": [{"b": null}]}"#, true),
        (#"{"a.b": {"$exists": true}}"#, #"{"a": [1]}"#, false),
        (#"{"a": {"$all": [{"$elemMatch": {"p": 1}}]}}"#, #"{"a": [{"p": 1}]}"#, true),
        (#"{"$comment": "x"}"#, #"{"a": 1}"#, true),
        // $in and $nin are hash lookups: the same equality as $eq, value by value.
        (#"{"n": {"$in": [2.0, "x"]}}"#, #"{"n": 2}"#, true),
        (#"{"n": {"$in": [2]}}"#, #"{"n": 2.0}"#, true),
        (#"{"n": {"$in": [-0.0]}}"#, #"{"n": 0}"#, true),
        (#"{"n": {"$in": [9007199254740993]}}"#, #"{"n": 9007199254740992.0}"#, false),
        (#"{"n": {"$in": [1.5, 7]}}"#, #"{"n": [3, 1.5]}"#, true),
        (#"{"n": {"$in": [1]}}"#, #"{"n": true}"#, false),
        (#"{"n": {"$in": [true]}}"#, #"{"n": 1}"#, false),
        (#"{"s": {"$in": ["\u00e9", "a"]}}"#, #"{"s": "e\u0301"}"#, false),
        (#"{"s": {"$in": ["\u00e9", "a"]}}"#, #"{"s": "\u00e9"}"#, true),
        (#"{"a": {"$in": [[1, 2], {"x": 1}]}}"#, #"{"a": [1, 2]}"#, true),
        (#"{"a": {"$in": [[1, 2], {"x": 1}]}}"#, #"{"a": {"x": 1}}"#, true),
        (#"{"a": {"$in": [[2, 1]]}}"#, #"{"a": [1, 2]}"#, false),
        (#"{"a": {"$in": [null, 3]}}"#, #"{}"#, true),
        (#"{"a": {"$nin": [null, 3]}}"#, #"{"a": 4}"#, true),
        (#"{"a": {"$nin": [1.5, "z"]}}"#, #"{"a": ["z"]}"#, false),
        (#"{"a": {"$elemMatch": {"p": {"$geoWithin": {"$box": [[0, 0], [1, 1]]}}}}}"#, #"{"a": [{"p": [2, 2]}, {"p": [0.5, 1]}]}"#, true),
    ]

    @Test("seed cases: SQL and the matcher give the stated answer")
    func seedCases() throws {
        let store = try TestStore()
        var documents: [JSONObject] = []
        for (i, seed) in Self.seeds.enumerated() {
            var document = object(seed.document)
            document["_id"] = .string("s\(i)")
            documents.append(document)
        }
        try store.insert("seeds", documents)
        for (i, seed) in Self.seeds.enumerated() {
            let id = "s\(i)"
            let stored = try store.reader.find("seeds", FindQuery(filter: .object(JSONObject([("_id", .string(id))]))))
            let filter = json(seed.filter)
            let both = JSONValue.object(JSONObject([("$and", .array([.object(JSONObject([("_id", .string(id))])), filter]))]))
            let sql = try store.idSet("seeds", both).contains(id)
            let memory = try FilterMatcher(filter).matches(try JSONParser.parse(stored[0]))
            #expect(sql == seed.matches, "SQL: \(seed.filter) on \(seed.document)")
            #expect(memory == seed.matches, "matcher: \(seed.filter) on \(seed.document)")
        }
    }

    @Test("$nearSphere inside $elemMatch is refused (a list's SQL for it cannot run in SQLite)")
    func nearInsideElemMatch() throws {
        let filter = json(#"{"a": {"$elemMatch": {"p": {"$nearSphere": [0, 0], "$maxDistance": 1000}}}}"#)
        #expect(throws: QueryError.self) { try FilterMatcher(filter) }
        let store = try TestStore()
        try store.insert("c", [#"{"a": [{"p": [0.5, 0.5]}]}"#])
        #expect(store.queryError("c", filter) != nil)
    }

    @Test("an evaluation stops past its allowance of steps; a $in list is one lookup per value tested")
    func allowance() throws {
        let big = JSONValue.object(JSONObject([("arr", .array((0..<50_000).map { JSONValue.int(Int64($0)) }))]))
        let inList = try FilterMatcher(try JSONParser.parse(#"{"arr": {"$in": [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12]}}"#))
        let (verdict, steps) = inList.evaluate(big, allowance: 100_000)
        #expect(verdict == false)
        #expect(steps > 50_000 && steps < 60_000, "\(steps) steps for 50,000 elements")
        #expect(inList.evaluate(big, allowance: 10_000).verdict == nil)
        let scans = try FilterMatcher(try JSONParser.parse(#"{"$or": [{"arr": {"$lt": -1}}, {"arr": {"$lt": -2}}, {"arr": {"$lt": -3}}]}"#))
        let (stopped, used) = scans.evaluate(big, allowance: 100_000)
        #expect(stopped == nil && used <= 100_001)
        #expect(scans.matches(big) == false)
        let cheap = try FilterMatcher(try JSONParser.parse(#"{"room": "a", "arr": {"$exists": true}}"#))
        let (found, few) = cheap.evaluate(.object(JSONObject([("room", .string("a")), ("arr", big.objectValue!["arr"]!)])), allowance: 128)
        #expect(found == true && few < 16, "\(few) steps")
    }

    @Test("random documents and filters: the same matches as SQL", arguments: [UInt64(1), 0xC0FFEE, 20_260_512, 77])
    func differential(seed: UInt64) throws {
        var generator = MatcherCaseGenerator(rng: SeededGenerator(seed: seed))
        let store = try TestStore()
        try store.insert("plain", (0..<300).map { generator.document($0) })
        let stored = try store.reader.find("plain", FindQuery(filter: .object(JSONObject()), limit: FindQuery.maxLimit))
        let documents = try stored.map { text in
            let value = try JSONParser.parse(text)
            return (id: value.objectValue?["_id"]?.stringValue ?? "?", text: text, value: value)
        }
        var compared = 0, selective = 0, refused = 0, mismatches = 0
        for round in 0..<900 {
            let filter = JSONValue.object(generator.filter())
            let matcher: FilterMatcher
            do { matcher = try FilterMatcher(filter) } catch {
                refused += 1
                #expect(store.queryError("plain", filter) != nil, "seed \(seed): the matcher refused what SQL runs: \(filter.jsonText)")
                continue
            }
            let sql: Set<String>
            do { sql = try store.idSet("plain", filter) } catch {
                Issue.record("seed \(seed): SQL failed where the matcher compiled: \(filter.jsonText): \(error)")
                continue
            }
            let memory = Set(documents.filter { matcher.matches($0.value) }.map(\.id))
            compared += 1
            if !memory.isEmpty && memory.count < documents.count { selective += 1 }
            if memory != sql {
                mismatches += 1
                if mismatches <= 5 {
                    let differing = documents.first { memory.contains($0.id) != sql.contains($0.id) }!
                    Issue.record("""
                        seed \(seed), round \(round): \(filter.jsonText)
                          SQL \(sql.count), matcher \(memory.count); first differing document \(differing.text): \
                        SQL \(sql.contains(differing.id)), matcher \(memory.contains(differing.id))
                        """)
                }
            }
            // The live probe (the same SQL on one bound document) agrees too.
            if round % 30 == 0 {
                let probe = try store.reader.probe(filter)
                let probed = Set(documents.filter { probe.matches($0.text, id: $0.id, timeLimit: 10) }.map(\.id))
                #expect(probed == memory, "seed \(seed), round \(round): probe and matcher differ on \(filter.jsonText)")
            }
        }
        print("FilterMatcher differential, seed \(seed): \(compared) filters × \(documents.count) documents compared, \(selective) selective, \(refused) refused, \(mismatches) mismatches")
        #expect(mismatches == 0, "seed \(seed)")
        #expect(compared >= 600, "seed \(seed): only \(compared) filters compiled")
        #expect(selective >= compared / 4, "seed \(seed): only \(selective) selective filters")
    }
}
