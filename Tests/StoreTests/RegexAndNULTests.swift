import Foundation
import JSON
import Store
import StoreSQLite
import Testing

/// `$regex` runs under PCRE2's limits, and text reaches SQLite and the
/// regexp function whole, NUL bytes included.
@Suite("Regex limits and NUL bytes")
struct RegexAndNULTests {
    static let longSubject = String(repeating: "a", count: 20_000)

    @Test("a pattern that backtracks too much stops with the regex limit, quickly",
          arguments: ["^(?:(a)|b)*c", "^(a?){60}(a|b)*$x", "(a|aa)+$"])
    func backtrackingStops(pattern: String) throws {
        let store = try TestStore()
        try store.insert("c", [JSONObject([("s", .string(Self.longSubject + "!"))])])
        let start = Date()
        let error = #expect(throws: SQLiteError.self) {
            try store.reader.count("c", filter: .object(JSONObject([("s", json(#"{"$regex":"\#(pattern)"}"#))])))
        }
        #expect(error?.isRegexLimit == true, "\(String(describing: error))")
        #expect(Date().timeIntervalSince(start) < 2)
    }

    @Test("the review's 8,000 empty groups are refused before they run")
    func manyGroupsRefused() throws {
        let store = try TestStore()
        try store.insert("c", [JSONObject([("s", .string(Self.longSubject))])])
        let error = store.queryError("c", .object(JSONObject([("s", .object(JSONObject([("$regex", .string(String(repeating: "()", count: 8_000)))])))])))
        #expect(error?.kind == .invalid)
        #expect(error?.message.contains("\(QueryLimits.maxRegexBytes)") == true, "\(error?.message ?? "no error")")
    }

    @Test("bound text keeps its NUL bytes, and reads back whole")
    func bindKeepsNUL() throws {
        let store = try TestStore()
        let db = try SQLiteConnection(path: store.path, readOnly: true)
        let text = "a\u{0}b"
        #expect(try db.prepare("SELECT hex(?1)").firstRow([.text(text)]) { $0.text(0) } == "610062")
        #expect(try db.prepare("SELECT ?1").firstRow([.text(text)]) { $0.text(0) } == text)
        #expect(try db.prepare("SELECT ?1").firstRow([.text("")]) { $0.isNull(0) } == false)
    }

    struct RegexCase: Sendable, CustomTestStringConvertible {
        let pattern: String
        let subject: String
        let matches: Bool
        var testDescription: String { "\(pattern.debugDescription) on \(subject.debugDescription)" }
    }

    /// Before: the pattern stopped at its NUL, so "a\0b" ran as "a".
    @Test("the regexp function sees the whole pattern and subject", arguments: [
        RegexCase(pattern: "a\u{0}b", subject: "xa\u{0}by", matches: true),
        RegexCase(pattern: "a\u{0}b", subject: "ab", matches: false),
        RegexCase(pattern: "^a$", subject: "a\u{0}b", matches: false),
        RegexCase(pattern: "(\u{0})", subject: "\u{0}", matches: true),
        RegexCase(pattern: "", subject: "", matches: true),
    ])
    func regexpSeesNUL(_ c: RegexCase) throws {
        let store = try TestStore()
        let db = try SQLiteConnection(path: store.path, readOnly: true)
        let result = try db.prepare("SELECT regexp(?1, ?2, '')").firstRow([.text(c.pattern), .text(c.subject)]) { $0.int(0) }
        #expect(result == (c.matches ? 1 : 0))
    }

    /// SQLite's JSON functions end a string at U+0000: such strings are
    /// refused rather than stored whole and compared cut short.
    @Test("a document or filter with a NUL in a string or key is refused")
    func documentWithNULIsRefused() throws {
        let store = try TestStore()
        for text in [#"{"s":"x\u0000y"}"#, #"{"t":["\u0000"]}"#, #"{"k\u0000":1}"#] {
            #expect(throws: StoreError.self) { try store.insert("c", [object(text)]) }
        }
        try store.insert("c", [object(#"{"_id":"n","s":"x"}"#)])
        #expect(try store.find("c", "{}").count == 1)
        #expect(store.queryError("c", json(#"{"s":{"$regex":"(\u0000)"}}"#)) != nil)
        #expect(store.queryError("c", json(#"{"s":"x\u0000y"}"#)) != nil)
    }
}
