import JSON
import Store
import Testing

struct ErrorCase: Sendable, CustomTestStringConvertible {
    let filter: String
    /// A fragment the message must contain (the operator's name for unsupported ones).
    let mentions: String
    init(_ filter: String, _ mentions: String = "") {
        self.filter = filter
        self.mentions = mentions
    }
    var testDescription: String { filter }
}

let unsupportedOperators: [ErrorCase] = [
    ErrorCase(#"{"$where":"this.a > 1"}"#, "$where"),
    ErrorCase(#"{"$function":{"body":"function() { return true }","args":[],"lang":"js"}}"#, "$function"),
    ErrorCase(#"{"$expr":{"$gt":["$a","$b"]}}"#, "$expr"),
    ErrorCase(#"{"$foo":1}"#, "$foo"),
    ErrorCase(#"{"a":{"$foo":1}}"#, "$foo"),
    ErrorCase(#"{"a":{"$gt":1,"$where":"x"}}"#, "$where"),
    ErrorCase(#"{"$and":[{"a":1},{"$where":"this.a"}]}"#, "$where"),
    ErrorCase(#"{"$or":[{"$expr":{"$eq":[1,1]}}]}"#, "$expr"),
    ErrorCase(#"{"$nor":[{"a":{"$function":{}}}]}"#, "$function"),
    ErrorCase(#"{"a":{"$elemMatch":{"$foo":1}}}"#, "$foo"),
    ErrorCase(#"{"a":{"$elemMatch":{"b":1,"$where":"x"}}}"#, "$where"),
    ErrorCase(#"{"a":{"$not":{"$where":"x"}}}"#, "$where"),
    ErrorCase(#"{"a":{"$all":[{"$elemMatch":{"$expr":1}}]}}"#, "$expr"),
    ErrorCase(#"{"a":{"$accumulator":{}}}"#, "$accumulator"),
]

let invalidFilters: [ErrorCase] = [
    ErrorCase(#"[1,2]"#),
    ErrorCase(#""a""#),
    ErrorCase(#"{"a":{"$in":5}}"#, "$in"),
    ErrorCase(#"{"a":{"$in":"abc"}}"#, "$in"),
    ErrorCase(#"{"a":{"$nin":{"x":1}}}"#, "$nin"),
    ErrorCase(#"{"a":{"$size":-1}}"#, "$size"),
    ErrorCase(#"{"a":{"$size":1.5}}"#, "$size"),
    ErrorCase(#"{"a":{"$size":"2"}}"#, "$size"),
    ErrorCase(#"{"a":{"$size":1e30}}"#, "$size"),
    ErrorCase(#"{"a":{"$regex":"("}}"#),
    ErrorCase(#"{"a":{"$regex":"a[","$options":"i"}}"#),
    ErrorCase(#"{"a":{"$regex":5}}"#, "$regex"),
    ErrorCase(#"{"a":{"$regex":"a","$options":"q"}}"#, "$options"),
    ErrorCase(#"{"a":{"$options":"i"}}"#, "$options"),
    ErrorCase(#"{"a":{"$mod":[0,1]}}"#, "$mod"),
    ErrorCase(#"{"a":{"$mod":[4]}}"#, "$mod"),
    ErrorCase(#"{"a":{"$mod":[4,0,1]}}"#, "$mod"),
    ErrorCase(#"{"a":{"$mod":"4"}}"#, "$mod"),
    ErrorCase(#"{"a":{"$mod":[1e30,0]}}"#, "$mod"),
    ErrorCase(#"{"a":{"$mod":[0.5,0]}}"#, "$mod"),
    ErrorCase(#"{"a":{"$mod":[4,1e30]}}"#, "$mod"),
    ErrorCase(#"{"a":{"$exists":"yes"}}"#, "$exists"),
    ErrorCase(#"{"a":{"$not":5}}"#, "$not"),
    ErrorCase(#"{"a":{"$not":{"b":1}}}"#, "$not"),
    ErrorCase(#"{"$and":[]}"#, "$and"),
    ErrorCase(#"{"$or":{"a":1}}"#, "$or"),
    ErrorCase(#"{"$nor":[5]}"#, "$nor"),
    ErrorCase(#"{"a":{"$all":5}}"#, "$all"),
    ErrorCase(#"{"a":{"$elemMatch":5}}"#, "$elemMatch"),
    ErrorCase(#"{"a":{"$type":"nope"}}"#, "$type"),
    ErrorCase(#"{"a":{"$type":[2,"nope"]}}"#, "$type"),
    ErrorCase(#"{"a":{"$gt":[1]}}"#, "$gt"),
    ErrorCase(#"{"a":{"$lt":{"b":1}}}"#, "$lt"),
    ErrorCase(#"{"a..b":1}"#),
    ErrorCase(#"{"a.":1}"#),
    ErrorCase(#"{"a.$b":1}"#),
    ErrorCase(#"{"a\"b":1}"#),
    ErrorCase(#"{"a":{"$gt":1,"b":2}}"#),
    ErrorCase(#"{"loc":{"$geoWithin":{"$box":[[0,0]]}}}"#, "$box"),
    ErrorCase(#"{"loc":{"$geoWithin":{"$polygon":[[0,0],[1,1]]}}}"#),
    ErrorCase(#"{"loc":{"$geoWithin":{"$centerSphere":[[0,0],-1]}}}"#, "$centerSphere"),
    ErrorCase(#"{"loc":{"$geoWithin":{"$box":[[0,0],[1,1]],"$polygon":[[0,0],[1,1],[1,0]]}}}"#, "$geoWithin"),
    ErrorCase(#"{"loc":{"$geoWithin":{"$triangle":[]}}}"#, "$triangle"),
    ErrorCase(#"{"loc":{"$nearSphere":"here"}}"#, "$nearSphere"),
    ErrorCase(#"{"loc":{"$nearSphere":[0,0],"$maxDistance":-5}}"#, "$maxDistance"),
    ErrorCase(#"{"loc":{"$maxDistance":5}}"#, "$maxDistance"),
]

@Suite("Query errors")
struct QueryErrorTests {
    @Test("server-side code, aggregation expressions and unknown operators are refused", arguments: unsupportedOperators)
    func unsupported(_ example: ErrorCase) throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"1","a":[{"b":1}]}"#])
        // Both on an existing collection and on one that was never written.
        for collection in ["c", "missing"] {
            let error = store.queryError(collection, json(example.filter))
            #expect(error?.kind == .unsupportedOperator, "\(example.filter) on \(collection): \(String(describing: error))")
            #expect(error?.message.contains(example.mentions) == true, "\(example.filter): \(error?.message ?? "no error")")
        }
        #expect(throws: QueryError.self) { try store.reader.count("c", filter: json(example.filter)) }
    }

    @Test("malformed operands are invalid queries", arguments: invalidFilters)
    func invalid(_ example: ErrorCase) throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"1","a":[1,2],"loc":[0,0]}"#])
        for collection in ["c", "missing"] {
            let error = store.queryError(collection, json(example.filter))
            #expect(error?.kind == .invalid, "\(example.filter) on \(collection): \(String(describing: error))")
            #expect(error?.message.hasPrefix("unexpected non-QueryError") == false, "\(error?.message ?? "")")
            if !example.mentions.isEmpty {
                #expect(error?.message.contains(example.mentions) == true, "\(example.filter): \(error?.message ?? "no error")")
            }
        }
    }

    @Test("a filter value is data, never SQL")
    func injection() throws {
        let store = try TestStore()
        try store.insert("c", [#"{"_id":"1","a":"x"}"#, #"{"_id":"2","a":"x' OR 1=1 --"}"#])
        #expect(try store.idSet("c", json(#"{"a":"x' OR 1=1 --"}"#)) == ["2"])
        #expect(try store.idSet("c", json(#"{"a":{"$in":["') OR 1=1 --"]}}"#)) == [])
        #expect(try store.idSet("c", json(#"{"a":{"$regex":"' OR '1'='1"}}"#)) == [])
    }
}
