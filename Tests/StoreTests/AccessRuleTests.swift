import JSON
import Store
import Testing

/// Access rules: variables, caller conditions, refusals with the rule's place,
/// and the levels written as rules agreeing with the levels themselves.
@Suite("Access rules")
struct AccessRuleTests {
    static func parse(_ text: String) -> JSONValue {
        do { return try JSONParser.parse(text) } catch { fatalError("bad JSON in test: \(text)") }
    }

    static func rule(_ text: String, update: Bool = false) throws -> AccessRule {
        try AccessRule(parse(text), at: "collections.posts.rules.read", allowPrevious: update)
    }

    static let alice = RuleCaller(id: "alice", roles: ["mod"])
    static let bob = RuleCaller(id: "bob")

    struct Case: Sendable, CustomStringConvertible {
        let rule: String
        let caller: RuleCaller
        let document: String
        let matches: Bool
        var description: String { "\(rule) for \(caller.id ?? "anonymous") on \(document)" }
    }

    static let cases: [Case] = [
        Case(rule: #"{"owner": "@caller.id"}"#, caller: alice, document: #"{"owner": "alice"}"#, matches: true),
        Case(rule: #"{"owner": "@caller.id"}"#, caller: bob, document: #"{"owner": "alice"}"#, matches: false),
        // An anonymous caller is nobody's owner, not the owner of documents without one.
        Case(rule: #"{"owner": "@caller.id"}"#, caller: .anonymous, document: #"{}"#, matches: false),
        Case(rule: #"{"owner": "@caller.id"}"#, caller: .anonymous, document: #"{"owner": null}"#, matches: false),
        Case(rule: #"{"owner": {"$ne": "@caller.id"}}"#, caller: .anonymous, document: #"{"owner": "alice"}"#, matches: true),
        Case(rule: #"{"$or": [{"published": true}, {"owner": "@caller.id"}]}"#, caller: .anonymous, document: #"{"published": true}"#, matches: true),
        Case(rule: #"{"$or": [{"published": true}, {"owner": "@caller.id"}]}"#, caller: bob, document: #"{"published": false, "owner": "alice"}"#, matches: false),
        Case(rule: #"{"team": {"$in": "@caller.roles"}}"#, caller: alice, document: #"{"team": "mod"}"#, matches: true),
        Case(rule: #"{"team": {"$in": "@caller.roles"}}"#, caller: bob, document: #"{"team": "mod"}"#, matches: false),
        Case(rule: #"{"_acl.read": {"$in": "@caller.principals"}}"#, caller: alice, document: #"{"_acl": {"read": ["role:mod"]}}"#, matches: true),
        // Caller conditions decide the whole rule for the request.
        Case(rule: #"{"@caller.signedIn": true}"#, caller: bob, document: #"{}"#, matches: true),
        Case(rule: #"{"@caller.signedIn": true}"#, caller: .anonymous, document: #"{}"#, matches: false),
        Case(rule: #"{"@caller.roles": "mod", "flagged": true}"#, caller: alice, document: #"{"flagged": true}"#, matches: true),
        Case(rule: #"{"@caller.roles": "mod", "flagged": true}"#, caller: bob, document: #"{"flagged": true}"#, matches: false),
        Case(rule: #"{"$or": [{"@caller.roles": "mod"}, {"owner": "@caller.id"}]}"#, caller: bob, document: #"{"owner": "bob"}"#, matches: true),
        Case(rule: #"{"$or": [{"@caller.roles": "mod"}, {"owner": "@caller.id"}]}"#, caller: bob, document: #"{"owner": "carol"}"#, matches: false),
        Case(rule: #"{"@caller.admin": true}"#, caller: alice, document: #"{}"#, matches: false),
        // `@@` is a literal `@`.
        Case(rule: #"{"handle": "@@alice"}"#, caller: bob, document: #"{"handle": "@alice"}"#, matches: true),
        Case(rule: #"{"expires": {"$gt": "@now"}}"#, caller: bob, document: #"{"expires": "2999-01-01T00:00:00.000Z"}"#, matches: true),
        Case(rule: #"{"expires": {"$gt": "@now"}}"#, caller: bob, document: #"{"expires": "2000-01-01T00:00:00.000Z"}"#, matches: false),
    ]

    @Test("a rule resolved for a caller matches what its documentation says", arguments: cases)
    func resolves(_ c: Case) throws {
        let filter = try #require(try Self.rule(c.rule).resolve(for: c.caller))
        #expect(try FilterMatcher(filter).matches(Self.parse(c.document)) == c.matches)
    }

    @Test("@previous reads the stored document in update rules")
    func previous() throws {
        let rule = try Self.rule(#"{"owner": "@caller.id", "verified": "@previous.verified"}"#, update: true)
        #expect(rule.usesPrevious)
        let stored = Self.parse(#"{"owner": "bob", "verified": true}"#)
        let filter = try #require(rule.resolve(for: Self.bob, previous: stored))
        #expect(try FilterMatcher(filter).matches(Self.parse(#"{"owner": "bob", "verified": true, "title": "new"}"#)))
        #expect(try !FilterMatcher(filter).matches(Self.parse(#"{"owner": "bob", "verified": false}"#)))
        let unverified = try #require(rule.resolve(for: Self.bob, previous: Self.parse(#"{"owner": "bob"}"#)))
        #expect(try !FilterMatcher(unverified).matches(Self.parse(#"{"owner": "bob", "verified": true}"#)))
    }

    static let refusals: [(rule: String, update: Bool, says: String)] = [
        (#"{"owner": "@caller.name"}"#, false, "@caller.name is not a rule variable"),
        (#"{"owner": "@previous.owner"}"#, false, "only in update rules"),
        (#"{"@caller.email": "x"}"#, false, "not a caller variable"),
        (#"{"$where": "sleep(1)"}"#, false, "$where"),
        (#"{"n": {"$gt": []}}"#, false, "compares numbers"),
        (#"{"owner": {"$gt": "@caller.id"}}"#, false, "compares numbers"),
        (#"{"at": {"$nearSphere": [0, 0]}}"#, false, "a rule can use $geoWithin"),
    ]

    @Test("a rule that cannot work is refused with its place in the config", arguments: refusals)
    func refused(_ r: (rule: String, update: Bool, says: String)) {
        do {
            _ = try Self.rule(r.rule, update: r.update)
            Issue.record("accepted \(r.rule)")
        } catch let error as RuleError {
            #expect(error.description.hasPrefix("collections.posts.rules.read"), "\(error)")
            #expect(error.description.contains(r.says), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("rules reads read, create, update and delete, and nothing else")
    func collectionRules() throws {
        let rules = try CollectionRules(Self.parse(#"{"read": {"published": true}, "update": {"owner": "@caller.id"}}"#), at: "collections.posts.rules")
        #expect(rules.read != nil && rules.update != nil && rules.create == nil && rules.delete == nil)
        #expect(throws: RuleError.self) { try CollectionRules(Self.parse(#"{"list": {}}"#), at: "collections.posts.rules") }
        #expect(throws: RuleError.self) { try CollectionRules(Self.parse(#"{"read": true}"#), at: "collections.posts.rules") }
    }

    /// Every level written as rules sees exactly what the level lets a caller read and change.
    @Test("the levels written as rules agree with the levels", arguments: AccessScope.Level.allCases)
    func presets(_ level: AccessScope.Level) throws {
        let rules = CollectionRules.preset(level)
        let acls = [nil, #"{"creator": "alice"}"#, #"{"creator": "bob", "read": ["alice"]}"#,
                    #"{"creator": "bob", "write": ["alice"]}"#, #"{"creator": null, "read": ["carol"]}"#]
        let callers: [(RuleCaller, AccessScope.Principal)] = [(.anonymous, .anonymous), (Self.alice, .user("alice")), (Self.bob, .user("bob"))]
        for acl in acls {
            let document = Self.parse(acl.map { #"{"n": 1, "_acl": \#($0)}"# } ?? #"{"n": 1}"#)
            for (caller, principal) in callers {
                let scope = AccessScope(principal: principal, level: level)
                let read = try FilterMatcher(try #require(rules.read?.resolve(for: caller))).matches(document)
                #expect(read == scope.canRead(document.objectValue), "\(level) read \(acl ?? "none") by \(principal)")
                let write = try FilterMatcher(try #require(rules.update?.resolve(for: caller))).matches(document)
                let mayWrite: Bool
                switch scope.writeRule {
                case .all: mayWrite = true
                case .none: mayWrite = false
                case .listed(let user, let principals, let lists):
                    let aclObject = document.objectValue?["_acl"]?.objectValue
                    mayWrite = lists.contains { list in
                        list == "creator" ? aclObject?["creator"] == .string(user)
                            : aclObject?[list]?.arrayValue?.contains { principals.map(JSONValue.string).contains($0) } ?? false
                    }
                case .matching: Issue.record("a level's write rule is never a filter"); mayWrite = false
                }
                #expect(write == mayWrite, "\(level) update \(acl ?? "none") by \(principal)")
            }
        }
    }
}
