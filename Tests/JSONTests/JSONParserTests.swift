import JSON
import Testing

@Suite struct JSONParserTests {
    @Test(arguments: [
        ("{}", JSONValue.object(JSONObject())),
        ("[1,-2,3.5,1e2]", .array([.int(1), .int(-2), .double(3.5), .double(100)])),
        ("\"a\\u00e9\\ud83d\\ude00\\n\"", .string("aé😀\n")),
        ("  true ", .bool(true)),
        ("null", .null),
        ("9223372036854775807", .int(Int64.max)),
    ])
    func parsesValidJSON(text: String, expected: JSONValue) throws {
        #expect(try JSONParser.parse(text) == expected)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\":}", "01", "1.", "tru", "\"\\x\"", "\"\u{01}\"", "{\"a\":1} x", "\"\\ud800\"", "NaN", "[1 2]"])
    func refusesMalformedJSON(text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
    }

    @Test func keepsKeyOrderAndRoundTrips() throws {
        let text = #"{"z":1,"a":{"y":[true,null,"q\"uote"],"b":2.5},"m":-7}"#
        let value = try JSONParser.parse(text)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value.jsonText == text)
    }

    @Test func mergePatchFollowsRFC7396() throws {
        let target = try JSONParser.parse(#"{"a":"b","c":{"d":"e","f":"g"}}"#)
        let patch = try JSONParser.parse(#"{"a":"z","c":{"f":null}}"#)
        #expect(target.mergePatched(with: patch).jsonText == #"{"a":"z","c":{"d":"e"}}"#)
    }
}
