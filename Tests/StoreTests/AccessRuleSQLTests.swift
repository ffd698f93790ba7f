import Foundation
import JSON
import RoostTestSupport
import Store
import StoreSQLite
import Testing

/// An access rule rendered into SQL (`FilterCompiler.ruleSQL`, as a read
/// holds it) selects exactly the documents the in-memory matcher selects
/// from the same resolved rule, for every caller: lists and live streams
/// cannot disagree about who sees what.
@Suite("Access rules: SQL and the matcher agree")
struct AccessRuleSQLTests {
    static let rules = [
        #"{"owner": "@caller.id"}"#,
        #"{"$or": [{"published": true}, {"owner": "@caller.id"}]}"#,
        #"{"team": {"$in": "@caller.roles"}}"#,
        #"{"$or": [{"@caller.roles": "mod"}, {"owner": "@caller.id"}]}"#,
        #"{"@caller.signedIn": true, "published": {"$ne": false}}"#,
        #"{"_acl.read": {"$in": "@caller.principals"}}"#,
        #"{"owner": {"$ne": "@caller.id"}, "tags": {"$all": ["a"]}}"#,
        #"{"expires": {"$gt": "@now"}}"#,
    ]

    static let callers = [RuleCaller.anonymous, RuleCaller(id: "alice", roles: ["mod", "red"]), RuleCaller(id: "bob", roles: ["blue"])]

    static func document(_ random: inout SeededGenerator) -> String {
        var members: [String] = []
        let people = ["\"alice\"", "\"bob\"", "null", "[\"alice\"]", "{\"$x\": 1}"]
        if Bool.random(using: &random) { members.append("\"owner\": \(people.randomElement(using: &random)!)") }
        if Bool.random(using: &random) { members.append("\"published\": \(["true", "false", "1", "\"yes\""].randomElement(using: &random)!)") }
        if Bool.random(using: &random) { members.append("\"team\": \(["\"mod\"", "\"blue\"", "[\"red\", \"x\"]", "[]"].randomElement(using: &random)!)") }
        if Bool.random(using: &random) { members.append("\"tags\": \(["[\"a\", \"b\"]", "\"a\"", "[]"].randomElement(using: &random)!)") }
        if Bool.random(using: &random) { members.append("\"expires\": \(["\"2000-01-01T00:00:00.000Z\"", "\"2999-01-01T00:00:00.000Z\"", "5"].randomElement(using: &random)!)") }
        if Bool.random(using: &random) {
            members.append("\"_acl\": {\"creator\": \(people.randomElement(using: &random)!), \"read\": [\(["\"bob\"", "\"role:mod\"", "\"role:blue\""].randomElement(using: &random)!)]}")
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    @Test("random documents, every rule, every caller")
    func agree() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-rule-sql-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try SQLiteConnection(path: directory.appendingPathComponent("rules.sqlite").path)
        var random = SeededGenerator(seed: 35)
        let documents = (0..<150).map { _ in Self.document(&random) }
        var checked = 0, matched = 0
        for text in Self.rules {
            let rule = try AccessRule(try JSONParser.parse(text), at: "test", allowPrevious: false)
            for caller in Self.callers {
                let filter = try #require(rule.resolve(for: caller))
                var params: [SQLValue] = [.null]
                let sql = try FilterCompiler.ruleSQL(filter, dialect: SQLiteDialect(), document: "?1") { value in
                    params.append(value)
                    return "?\(params.count)"
                }
                let statement = try db.prepare("SELECT CASE WHEN (\(sql)) THEN 1 ELSE 0 END")
                let matcher = try FilterMatcher(filter)
                for document in documents {
                    params[0] = .text(document)
                    let inSQL = try statement.firstRow(params) { $0.int(0) } == 1
                    let inMemory = matcher.matches(try JSONParser.parse(document))
                    #expect(inSQL == inMemory, "\(text) for \(caller.id ?? "anonymous") on \(document)")
                    checked += 1
                    if inSQL { matched += 1 }
                }
            }
        }
        // Both outcomes occur, so the comparison means something.
        #expect(checked == Self.rules.count * Self.callers.count * 150)
        #expect(matched > checked / 20 && matched < checked - checked / 20)
    }
}
