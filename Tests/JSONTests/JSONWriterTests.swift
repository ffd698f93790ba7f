import JSON
import Testing

@Suite struct JSONWriterTests {
    @Test(arguments: [
        (JSONValue.int(0), "0"),
        (.int(-1), "-1"),
        (.int(Int64.max), "9223372036854775807"),
        (.int(Int64.min), "-9223372036854775808"),
        (.double(2.0), "2"),
        (.double(-0.5), "-0.5"),
        (.double(1e20), "1e+20"),
        (.double(.infinity), "null"),
        (.string("plain é 😀"), "\"plain é 😀\""),
        (.string("q\"b\\n\nr\rt\t\u{08}\u{0C}\u{01}\u{1F}"), #""q\"b\\n\nr\rt\t\b\f\u0001\u001f""#),
        (.string(""), "\"\""),
        (.array([.null, .bool(true), .bool(false)]), "[null,true,false]"),
    ])
    func writesCompactJSON(value: JSONValue, expected: String) {
        #expect(value.jsonText == expected)
    }

    @Test func quotedEscapesWhatJSONRequires() {
        #expect(JSONWriter.quoted("a\"b") == #""a\"b""#)
    }

    @Test func whatItWritesParsesBackToTheSameValue() throws {
        let value = JSONValue.object(JSONObject([("k\"ey", .array([.int(-42), .string("\u{7F}x\u{0}"), .double(3.25)]))]))
        #expect(try JSONParser.parse(value.jsonText) == value)
    }
}
