import Foundation
import JSON
import Testing

/// `UTF8Search` answers what Foundation's Unicode-aware search answers, for
/// the byte-exact texts it is used on (JSON, SQL).
@Suite struct UTF8SearchTests {
    static let cases: [(text: String, needle: String, replacement: String)] = [
        ("", "a", "b"),
        ("abc", "", "x"),
        ("abc", "abcd", "x"),
        ("abc", "abc", ""),
        ("aaaa", "aa", "b"),
        ("x (SELECT d) <= ?1 AND (SELECT d) IS NOT NULL", "(SELECT d)", "d.nd"),
        (#"{"a":1,"_distance":2}"#, #""_distance""#, "-"),
        ("héllo wörld héllo", "héllo", "hi"),
        ("ab", "b", "bb"),
        ("abab", "ba", ""),
    ]

    @Test(arguments: cases.indices)
    func agreesWithFoundation(index: Int) {
        let c = Self.cases[index]
        let expectedOffset = c.needle.isEmpty ? nil : c.text.range(of: c.needle).map { c.text.utf8.distance(from: c.text.startIndex, to: $0.lowerBound) }
        #expect(UTF8Search.firstOffset(of: c.needle, in: c.text) == expectedOffset)
        let expected = c.needle.isEmpty ? c.text : c.text.replacingOccurrences(of: c.needle, with: c.replacement)
        #expect(UTF8Search.replacing(c.needle, with: c.replacement, in: c.text) == expected)
    }
}
