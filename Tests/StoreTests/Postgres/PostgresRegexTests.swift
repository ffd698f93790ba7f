import Foundation
import JSON
import Store
@testable import StorePostgres
import Testing

/// `$regex` on PostgreSQL: patterns in the common subset of PCRE2 and ARE
/// match exactly the strings PCRE2 matches (SQLite runs PCRE2 itself);
/// anything else is a 400 that names the construct.
@Suite("PostgreSQL engine: $regex")
struct PostgresRegexTests {
    static let subjects = ["", "a", "A", "abc", "ABC", "a\nb", "line\n", "x.y", "xzy", "a+b", "[x]", "{1}", "é", "日本",
                           "aaa", "ab", "abab", "tab\there", "cat", "cAt", "a-b", "a]b", "end$", "new\nline\n",
                           // PCRE2's caseless k and s also match the Kelvin sign and the long s.
                           "sky", "SKY", "\u{17F}\u{212A}y", "\u{212A}", "mask", "MA\u{17F}K"]

    static let accepted: [(String, String)] = [
        ("a", ""), ("^a", ""), ("b$", ""), ("^$", ""), ("a.c", ""), ("a.b", "s"), ("a.b", ""), ("x\\.y", ""), ("a+", ""),
        ("^a{2,3}$", ""), ("(ab)+$", ""), ("a|日", ""), ("[a-c]+", ""), ("[^a-z]", ""), ("[]a]", ""), ("[-b]", ""),
        ("\\[x\\]", ""), ("a\\+b", ""), ("\\{1\\}", ""), ("ca?t", ""), ("c.t", "i"), ("ABC", "i"), ("^(?:ab)*$", ""),
        ("e$", ""), ("\\n", ""), ("\\t", ""), ("é", ""), ("line$", ""), ("^line$", ""), ("a*?b", ""), ("end\\$", ""),
        ("sky", "i"), ("^k$", "i"), ("[ks]+y", "i"), ("[^s]", "i"), ("a[sk]", "i"), ("S", ""), ("K", "i"),
    ]

    static let refused: [(String, String, String)] = [
        ("\\d", "", "\\d"), ("\\w+", "", "\\w"), ("\\bcat", "", "\\b"), ("(a)\\1", "", "\\1"), ("(?=a)", "", "(?"),
        ("(?<n>a)", "", "(?"), ("a++", "", "possessive"), ("[[:alpha:]]", "", "POSIX"), ("a", "m", "option m"),
        ("a", "x", "option x"), ("é", "i", "non-ASCII"), ("[a-z]", "i", "range"), ("[é-ü]", "", "ASCII"),
    ]

    func stores() throws -> (TestStore, PGTestStore) {
        let sqlite = try TestStore(), pg = try PGTestStore()
        let docs = Self.subjects.enumerated().map { i, s in
            var o = JSONObject()
            o["_id"] = .string("s\(i)")
            o["v"] = .string(s)
            return o
        }
        try sqlite.insert("c", docs)
        try pg.insert("c", docs)
        return (sqlite, pg)
    }

    static func filter(_ pattern: String, _ options: String) -> JSONValue {
        var ops = JSONObject()
        ops["$regex"] = .string(pattern)
        if !options.isEmpty { ops["$options"] = .string(options) }
        var f = JSONObject()
        f["v"] = .object(ops)
        return .object(f)
    }

    @Test("the common subset matches what PCRE2 matches")
    func accepted() throws {
        let (sqlite, pg) = try stores()
        for (pattern, options) in Self.accepted {
            let filter = Self.filter(pattern, options)
            let expected = try sqlite.idSet("c", filter)
            #expect(try pg.idSet("c", filter) == expected, "/\(pattern)/\(options)")
        }
    }

    @Test("anything else is refused, naming the construct")
    func refused() throws {
        let (_, pg) = try stores()
        for (pattern, options, named) in Self.refused {
            do {
                _ = try pg.idSet("c", Self.filter(pattern, options))
                Issue.record("/\(pattern)/\(options) ran on PostgreSQL")
            } catch let error as QueryError {
                #expect(error.message.contains(named), "/\(pattern)/\(options): \(error.message)")
            }
        }
    }
}
