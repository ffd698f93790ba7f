import JSON
import RoostTestSupport
import Store
import StoreSQLite
import Testing

/// The read rule's three forms cannot drift: for random rules, callers and
/// documents, the rows SQLite's lists, counts and reads by id return under a
/// scope are exactly those `AccessScope.canRead` (the live streams' and
/// tombstones' in-memory matcher) admits. `PostgresRuleDifferentialTests`
/// runs the same cases on PostgreSQL.
@Suite("Access rules: SQL lists and the in-memory matcher agree on random rules")
struct RuleDifferentialTests {
    /// Which rows carry the rule's stamp (`RuleStamp`): none, every one, or
    /// the first 50 (the rest judged by the whole rule, as after a change).
    enum Stamps: Sendable { case none, all, some }

    @Test("random rules × callers × documents", arguments: [(UInt64(35), Stamps.none), (3_500, .all), (350_000, .some), (35_000, .all)])
    func agree(seed: UInt64, stamps: Stamps) throws {
        let store = try TestStore()
        try store.users(RuleCaseGenerator.users)
        try store.roles(RuleCaseGenerator.roles)
        // Seeds past the first index the rule fields: equality is then an index probe per row (`rowProbes`).
        if seed != 35 { try store.index("c", ["owner", "published", "team", "n", "_acl.read", "tags", "label"]) }
        var generator = RuleCaseGenerator(rng: SeededGenerator(seed: seed))
        let compared = try RuleDifferential.run(&generator, insert: { creator, body in
            let scope = creator.map { AccessScope(principal: .user($0), level: .public) } ?? .system
            _ = try store.writer.commitBatch([{ w in try w.insert(into: "c", body, scope: scope) }])[0].get()
        }, restamp: { rule in
            guard stamps != .none else { return 0 }
            store.writer.useRuleStamps { $0 == "c" ? rule.stamp : nil }
            if stamps == .some { _ = try store.writer.restampRows(limit: 50); return 1 }
            while try store.writer.restampRows(limit: 50) {}
            return 1
        }, reader: store.reader)
        #expect(compared.pairs >= 40)
        // Most random rules have a branch without variables: the stamped SQL was compared.
        if stamps != .none { #expect(compared.stamped >= 10) }
    }
}

/// The comparison both engines' tests run.
enum RuleDifferential {
    /// Inserts 120 documents, then for 40 random rules × 4 callers checks a
    /// list (with and without a filter of the caller's), a count and reads by
    /// id against the matcher. - Returns: how many (rule, caller) pairs admitted some rows and hid others.
    /// `restamp` stamps the rows for a rule (SQLite) and says whether it did (1) or not (0).
    static func run(_ generator: inout RuleCaseGenerator, insert: (String?, JSONObject) throws -> Void,
                    restamp: (AccessRule) throws -> Int = { _ in 0 },
                    reader: any DocumentsReading) throws -> (pairs: Int, stamped: Int) {
        for index in 0..<120 {
            let (creator, body) = generator.document(index)
            try insert(creator, body)
        }
        let stored = try reader.find("c", FindQuery(filter: .object(JSONObject()), limit: FindQuery.maxLimit), scope: .system, redaction: nil)
            .compactMap { text -> JSONObject? in if case .object(let o)? = try? JSONParser.parse(text) { return o }; return nil }
        #expect(stored.count == 120)
        var compared = 0
        var stamped = 0
        for _ in 0..<40 {
            let text = generator.rule()
            let rule = try AccessRule(try JSONParser.parse(#"{"read": \#(text)}"#).objectValue!["read"]!, at: "test", allowPrevious: false)
            if rule.stamp != nil { stamped += try restamp(rule) }
            let rules = CollectionRules(read: rule)
            for _ in 0..<4 {
                let (principal, roles) = generator.caller()
                let level = generator.pick(AccessScope.Level.allCases)
                let scope = AccessScope(principal: principal, level: level, roles: roles, rules: rules)
                let filter = generator.callerFilter()
                let matcher = try FilterMatcher(filter)
                let expected = Set(stored.filter { scope.canRead($0) && matcher.matches(.object($0)) }.map { $0["_id"]!.stringValue! })
                do { try scope.checkCollectionRead() } catch {
                    // An anonymous caller the rule admits nowhere hears 401 before any row is read.
                    #expect(principal == .anonymous && !stored.contains(where: scope.canRead), "401 for \(text)")
                    continue
                }
                let found = try reader.find("c", FindQuery(filter: filter, limit: FindQuery.maxLimit), scope: scope, redaction: nil)
                    .map { JSONParser.parseObjectID($0) }
                let context = "rule \(text), caller \(principal) roles \(roles), filter \(filter.jsonText)"
                #expect(Set(found) == expected, "\(context)")
                #expect(found.count == Set(found).count, "no duplicates: \(context)")
                #expect(try reader.count("c", filter: filter, scope: scope) == expected.count, "count: \(context)")
                for document in stored.prefix(12) {
                    let id = document["_id"]!.stringValue!
                    let got = try reader.get("c", id: id, scope: scope, redaction: nil) != nil
                    #expect(got == scope.canRead(document), "get \(id): \(context)")
                }
                // Only a rule that admits some rows and hides others tells the forms apart.
                if !expected.isEmpty && expected.count < stored.count { compared += 1 }
            }
        }
        return (compared, stamped)
    }
}

private extension JSONParser {
    static func parseObjectID(_ text: String) -> String {
        (try? parse(text))?.objectValue?["_id"]?.stringValue ?? "?"
    }
}
