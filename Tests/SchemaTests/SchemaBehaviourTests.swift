import JSON
import Schema
import Testing

/// Roost's own cases: the violation list's shape and order, the two Roost formats,
/// references, refused schemas, and hostile schemas and instances.
@Suite struct SchemaBehaviourTests {
    static func value(_ text: String) -> JSONValue { try! JSONParser.parse(text) }
    static func schema(_ text: String) throws -> JSONSchema { try JSONSchema(value(text)) }

    static let form = """
    {"type":"object","required":["title","price","tags"],"additionalProperties":false,
     "properties":{"title":{"type":"string","minLength":1,"maxLength":5},
                   "price":{"type":"number","minimum":0},
                   "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true},
                   "place":{"format":"geo-point"}}}
    """

    /// (instance, [(instancePointer, keyword, schemaPath)]) in the order they must come.
    @Test(arguments: [
        (#"{"title":"ok","price":1,"tags":[]}"#, [String]()),
        (#"{"price":-1,"title":"much too long","tags":["a",2,"a"]}"#,
         ["/price minimum /properties/price/minimum", "/title maxLength /properties/title/maxLength",
          "/tags uniqueItems /properties/tags/uniqueItems", "/tags/1 type /properties/tags/items/type"]),
        (#"{"extra":true}"#,
         ["/extra additionalProperties /additionalProperties", "/title required /required",
          "/price required /required", "/tags required /required"]),
        (#"{"title":"","price":"12","tags":[],"place":[37.77,-122.48]}"#,
         ["/title minLength /properties/title/minLength", "/price type /properties/price/type",
          "/place format /properties/place/format"]),
        (#"[1]"#, [" type /type"]),
    ])
    func violationsInDocumentOrder(instance: String, expected: [String]) throws {
        let violations = try Self.schema(Self.form).validate(Self.value(instance))
        #expect(violations.map { "\($0.instancePointer) \($0.keyword) \($0.schemaPath)" } == expected)
        #expect(violations.allSatisfy { !$0.message.isEmpty })
        #expect(try Self.schema(Self.form).isValid(Self.value(instance)) == expected.isEmpty)
    }

    @Test(arguments: [
        ("[-122.48, 37.77]", nil),
        ("[180, -90]", nil),
        ("[0.0, 0]", nil),
        ("[37.77, -122.48]", "latitude -122.48 is outside [-90, 90]"),
        ("[10, 200]", "latitude 200 is outside [-90, 90]"),
        ("[181, 0]", "longitude 181 is outside [-180, 180]"),
        (#"{"lat":1,"lng":2}"#, "not an object"),
        ("[1]", "exactly 2 numbers"),
        ("[1, 2, 3]", "exactly 2 numbers"),
        (#"["1", 2]"#, "both must be numbers"),
        ("null", "not null"),
        (#""1,2""#, "not a string"),
    ] as [(String, String?)])
    func geoPoint(instance: String, problem: String?) throws {
        let violations = try Self.schema(#"{"properties":{"at":{"format":"geo-point"}}}"#).validate(Self.value(#"{"at":\#(instance)}"#))
        if let problem {
            #expect(violations.count == 1)
            #expect(violations.first?.instancePointer == "/at")
            #expect(violations.first?.message.contains("[longitude, latitude]") == true)
            #expect(violations.first?.message.contains(problem) == true, "\(violations)")
        } else {
            #expect(violations.isEmpty)
        }
    }

    static let referencing = """
    {"type":"object","properties":{
       "author":{"type":"string","format":"reference","x-roost-collection":"users"},
       "reviewers":{"type":"array","items":{"$ref":"#/$defs/user"}},
       "owner":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/user"}]},
       "not/this":{"not":{"$ref":"#/$defs/user"}}},
     "$defs":{"user":{"format":"reference","x-roost-collection":"users"}}}
    """

    @Test(arguments: [
        (#"{"author":"u1","reviewers":["u2","u3"],"owner":"u4"}"#, ["/author users", "/reviewers/0 users", "/reviewers/1 users", "/owner users"]),
        (#"{"owner":null,"reviewers":[]}"#, []),
        (#"{"not/this":5}"#, []),
        (#"{}"#, []),
    ])
    func references(instance: String, expected: [String]) throws {
        let schema = try Self.schema(Self.referencing)
        #expect(schema.references(in: Self.value(instance)).map { "\($0.pointer) \($0.collection)" } == expected)
        #expect(schema.validate(Self.value(instance)).isEmpty)
    }

    @Test func referenceMustBeAString() throws {
        let violations = try Self.schema(Self.referencing).validate(Self.value(#"{"author":7,"reviewers":[""]}"#))
        #expect(violations.map { $0.instancePointer } == ["/author", "/author", "/reviewers/0"])
        #expect(violations.last?.message.contains("\"users\"") == true)
    }

    /// Schemas refused at compile time, with the pointer they name.
    @Test(arguments: [
        (##"{"$dynamicRef":"#x"}"##, "/$dynamicRef"),
        (#"{"unevaluatedProperties":false}"#, "/unevaluatedProperties"),
        (#"{"properties":{"a":{"unevaluatedItems":false}}}"#, "/properties/a/unevaluatedItems"),
        (#"{"$ref":"https://example.com/other.json"}"#, "/$ref"),
        (##"{"$ref":"#/$defs/missing"}"##, "/$ref"),
        (##"{"$ref":"#nowhere"}"##, "/$ref"),
        (#"{"pattern":"(unclosed"}"#, "/pattern"),
        (#"{"patternProperties":{"[":{}}}"#, "/patternProperties/["),
        (#"{"minimun":1}"#, "/minimun"),
        (#"{"format":"emial"}"#, "/format"),
        (#"{"format":"reference"}"#, ""),
        (#"{"x-roost-collection":"users"}"#, "/x-roost-collection"),
        (#"{"type":"text"}"#, "/type"),
        (#"{"minLength":-1}"#, "/minLength"),
        (#"{"multipleOf":0}"#, "/multipleOf"),
        (#"{"items":[{}]}"#, "/items"),
        (#"{"required":["a","a"]}"#, "/required"),
        (#"{"$schema":"http://json-schema.org/draft-07/schema#"}"#, "/$schema"),
        (#"{"properties":{"a":5}}"#, "/properties/a"),
        (#"{"allOf":[]}"#, "/allOf"),
        ("[]", ""),
    ])
    func refused(schema: String, pointer: String) {
        #expect(throws: SchemaError.self) { try Self.schema(schema) }
        do throws(SchemaError) {
            _ = try JSONSchema(Self.value(schema))
        } catch {
            #expect(error.pointer == pointer, "\(error)")
            #expect(!error.message.isEmpty)
        }
    }

    /// Annotations and extensions are accepted and change nothing.
    @Test func annotationsAccepted() throws {
        let schema = try Self.schema(#"{"title":"t","description":"d","examples":[1],"default":2,"$comment":"c","deprecated":true,"readOnly":false,"writeOnly":false,"x-ui":{"widget":"x"},"type":"integer"}"#)
        #expect(schema.validate(.int(1)).isEmpty)
        #expect(schema.validate(.double(1.0)).isEmpty)
        #expect(schema.validate(.double(1.5)).map(\.keyword) == ["type"])
    }

    /// $ref cycles that never reach the instance are refused, not run forever.
    @Test(arguments: [
        ##"{"$ref":"#"}"##,
        ##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}"##,
        ##"{"anyOf":[{"type":"string"},{"$ref":"#"}]}"##,
        ##"{"$anchor":"me","not":{"$ref":"#me"}}"##,
        ##"{"if":{"$ref":"#"}}"##,
    ])
    func cyclesRefused(schema: String) {
        #expect(throws: SchemaError.self) { try Self.schema(schema) }
    }

    /// A recursive schema that descends into the instance is fine.
    @Test func recursiveTree() throws {
        let schema = try Self.schema(##"{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#"}}}}"##)
        #expect(schema.validate(Self.value(#"{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}"#)).isEmpty)
        #expect(schema.validate(Self.value(#"{"v":1,"kids":[{"v":2,"kids":[{"v":"3"}]}]}"#)).map(\.instancePointer) == ["/kids/0/kids/0/v"])
    }

    /// Deep schemas are refused; deep instances give a violation, never a crash.
    @Test func depthLimits() throws {
        let deep = String(repeating: #"{"items":"#, count: 70) + "{}" + String(repeating: "}", count: 70)
        #expect(throws: SchemaError.self) { try Self.schema(deep) }
        let chain = "{\"$defs\":{" + (0..<80).map { "\"d\($0)\":{\"$ref\":\"#/$defs/d\($0 + 1)\"}" }.joined(separator: ",") + ",\"d80\":{}},\"$ref\":\"#/$defs/d0\"}"
        #expect(throws: SchemaError.self) { try Self.schema(chain) }
        let tree = try Self.schema(##"{"type":"array","items":{"$ref":"#"}}"##)
        var instance = JSONValue.array([])
        for _ in 0..<1_000 { instance = .array([instance]) }
        let violations = tree.validate(instance)
        #expect(violations.count == 1)
        #expect(violations.first?.message.contains("too deep") == true)
        #expect(!tree.isValid(instance))
    }

    /// A huge enum is a hash lookup; JSON equality (1 == 1.0, key order ignored).
    @Test func hugeEnumAndEquality() throws {
        let values = (0..<50_000).map { JSONValue.int(Int64($0)) } + [Self.value(#"{"a":1,"b":[1.0]}"#)]
        let schema = try JSONSchema(.object(JSONObject([(key: "enum", value: .array(values))])))
        #expect(schema.validate(.double(49_999.0)).isEmpty)
        #expect(schema.validate(Self.value(#"{"b":[1],"a":1.0}"#)).isEmpty)
        #expect(schema.validate(.int(50_000)).map(\.keyword) == ["enum"])
        #expect(schema.validate(.string("1")).count == 1)
    }

    /// Messages name the rule in words a developer reads.
    @Test(arguments: [
        (#"{"minimum":5}"#, "3", "must be at least 5"),
        (#"{"exclusiveMaximum":5}"#, "5", "must be less than 5"),
        (#"{"type":["string","null"]}"#, "1.5", "must be null or a string, not a number with a fraction"),
        (#"{"enum":["a","b"]}"#, #""c""#, #"must be one of "a", "b""#),
        (#"{"const":{"x":1}}"#, "1", #"must be {"x":1}"#),
        (#"{"pattern":"^[a-z]+$"}"#, #""A""#, #"must match the pattern "^[a-z]+$""#),
        (#"{"format":"email"}"#, #""nope""#, "e-mail"),
        (#"{"format":"date-time"}"#, #""2026-02-30T00:00:00Z""#, "date-time"),
        (#"{"oneOf":[{"type":"integer"},{"minimum":0}]}"#, "3", "matches 0 and 1"),
        (#"{"dependentRequired":{"a":["b"]}}"#, #"{"a":1}"#, #"property "b" is required when "a" is present"#),
        (#"{"propertyNames":{"maxLength":2}}"#, #"{"abc":1}"#, #"property name "abc""#),
        (#"{"maxLength":2}"#, #""ééé""#, "at most 2 characters"),
        (#"{"contains":{"type":"string"},"minContains":2}"#, #"["a",1]"#, "at least 2 items"),
    ])
    func messages(schema: String, instance: String, message: String) throws {
        let violations = try Self.schema(schema).validate(Self.value(instance))
        #expect(violations.count == 1)
        #expect(violations.first?.message.contains(message) == true, "\(violations)")
    }

    /// A catastrophic pattern meets PCRE2's limits and fails the value instead of pinning the thread.
    @Test func catastrophicPatternIsBounded() throws {
        let schema = try Self.schema(#"{"pattern":"^(a+)+$"}"#)
        let subject = String(repeating: "a", count: 40) + "b"
        #expect(schema.validate(.string(subject)).map(\.keyword) == ["pattern"])
        #expect(schema.validate(.string(String(repeating: "a", count: 40))).isEmpty)
    }

    /// One pass gives violations and references; a pointer reached twice is listed once.
    @Test func checkGivesBoth() throws {
        let schema = try Self.schema(#"{"allOf":[{"properties":{"u":{"format":"reference","x-roost-collection":"users"}}},{"properties":{"u":{"format":"reference","x-roost-collection":"users","maxLength":2}}}]}"#)
        let result = schema.check(Self.value(#"{"u":"abc"}"#))
        #expect(result.violations.map(\.schemaPath) == ["/allOf/1/properties/u/maxLength"])
        #expect(result.references.map(\.pointer) == ["/u"])
    }

    /// Schemas are shared by worker threads.
    @Test func concurrentUse() async throws {
        let schema = try Self.schema(Self.form)
        let bad = Self.value(#"{"title":"much too long","price":1,"tags":[]}"#)
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { (0..<500).reduce(0) { n, _ in n + schema.validate(bad).count } } }
            return await group.reduce(0, +)
        }
        #expect(counts == 8 * 500)
    }
}
