import JSON
import RoostTestSupport
import Store

/// Random access rules, callers and documents for the differential tests
/// that prove an engine's SQL and the in-memory matcher (`AccessScope.canRead`)
/// admit exactly the same rows (`RuleDifferentialTests`, and its PostgreSQL twin).
struct RuleCaseGenerator {
    var rng: SeededGenerator

    static let users = ["alice", "bob", "carol"]
    static let roles = ["mod", "red", "blue"]

    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &rng)! }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    /// A condition on documents or the caller, with variables.
    mutating func atom() -> String {
        switch Int.random(in: 0..<13, using: &rng) {
        case 0: return #"{"owner": "@caller.id"}"#
        case 1: return #"{"owner": {"$ne": "@caller.id"}}"#
        case 2: return #"{"published": \#(pick(["true", "false"]))}"#
        case 3: return #"{"team": {"$in": "@caller.roles"}}"#
        case 4: return #"{"_acl.read": {"$in": "@caller.principals"}}"#
        case 5: return #"{"_acl.creator": "@caller.id"}"#
        case 6: return #"{"@caller.roles": "\#(pick(Self.roles))"}"#
        case 7: return #"{"@caller.signedIn": \#(pick(["true", "false"]))}"#
        case 8: return #"{"n": {"\#(pick(["$gt", "$lte", "$ne"]))": \#(Int.random(in: 0..<6, using: &rng))}}"#
        case 9: return #"{"expires": {"$gt": "@now"}}"#
        case 10: return #"{"tags": {"$all": ["\#(pick(["a", "b"]))"]}}"#
        case 11: return #"{"label": {"$regex": "^\#(pick(["x", "y"]))", "$options": "i"}}"#
        default: return #"{"note": {"$exists": \#(pick(["true", "false"]))}}"#
        }
    }

    /// A rule of one to three atoms joined by `$or`, `$and`, `$nor` or implicit AND, at most two deep.
    mutating func rule(depth: Int = 0) -> String {
        if depth == 2 || chance(0.35) { return atom() }
        let parts = (0..<Int.random(in: 1...3, using: &rng)).map { _ in rule(depth: depth + 1) }
        return #"{"\#(pick(["$or", "$and", "$nor", "$or"]))": [\#(parts.joined(separator: ", "))]}"#
    }

    mutating func caller() -> (AccessScope.Principal, [String]) {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return (.anonymous, [])
        default:
            let roles = Self.roles.filter { _ in chance(0.4) }
            return (.user(pick(Self.users)), roles)
        }
    }

    /// A document, and the user who creates it (nil: made by the system).
    mutating func document(_ index: Int) -> (creator: String?, body: JSONObject) {
        var members: [String] = [#""_id": "d\#(index)""#]
        let people = [#""alice""#, #""bob""#, "null", #"["alice"]"#]
        if chance(0.7) { members.append(#""owner": \#(pick(people))"#) }
        if chance(0.6) { members.append(#""published": \#(pick(["true", "false", "1"]))"#) }
        if chance(0.5) { members.append(#""team": \#(pick([#""mod""#, #""blue""#, #"["red", "x"]"#, "[]"]))"#) }
        if chance(0.5) { members.append(#""n": \#(pick(["0", "3", "5", "2.5", #""4""#]))"#) }
        if chance(0.4) { members.append(#""tags": \#(pick([#"["a", "b"]"#, #""a""#, "[]"]))"#) }
        if chance(0.4) { members.append(#""label": \#(pick([#""xylo""#, #""Yak""#, #""zz""#]))"#) }
        if chance(0.3) { members.append(#""note": \#(pick(["null", #""n""#]))"#) }
        if chance(0.4) { members.append(#""expires": \#(pick([#""2000-01-01T00:00:00.000Z""#, #""2999-01-01T00:00:00.000Z""#]))"#) }
        if chance(0.5) {
            let readers = [#"["bob"]"#, #"["role:mod"]"#, #"["carol", "role:blue"]"#, "[]"]
            members.append(#""_acl": {"read": \#(pick(readers)), "write": \#(pick(readers))}"#)
        }
        let creator: String? = chance(0.8) ? pick(Self.users) : nil
        guard case .object(let body)? = try? JSONParser.parse("{" + members.joined(separator: ", ") + "}") else { fatalError("bad test document") }
        return (creator, body)
    }
}

extension RuleCaseGenerator {
    /// The caller filters a list runs after visibility: none, or one on `n`.
    mutating func callerFilter() -> JSONValue {
        guard chance(0.5), case let value? = try? JSONParser.parse(#"{"n": {"$gte": \#(Int.random(in: 0..<5, using: &rng))}}"#) else {
            return .object(JSONObject())
        }
        return value
    }
}
