import JSON
import Synchronization

/// An access rule as an operator writes it: a filter in Roost's query
/// language whose values may be variables, resolved for each caller into a
/// `Filter` that lists and counts compile into SQL and live streams, pushes
/// and writes evaluate in memory (docs/RULES.md).
///
/// Variables are whole string values: `"@caller.id"`, `"@caller.roles"`,
/// `"@caller.principals"`, `"@caller.signedIn"`, `"@caller.admin"`, `"@now"`
/// and, in `update` rules, `"@previous.<path>"` (the stored document's value
/// there, `null` when missing). `"@@…"` is a literal string starting with `@`.
/// Any other string starting with `@` is refused when the rule is read, so a
/// misspelt variable never passes as a literal.
///
/// A caller variable may also be a field of the filter, to test the caller
/// rather than the document: `{"@caller.signedIn": true}`,
/// `{"@caller.roles": "moderator"}`, and in `update` rules
/// `{"@previous.owner": "@caller.id"}` (the stored document). Such a
/// condition is decided when the rule is resolved (it is true or false for
/// the whole request), so the SQL and the in-memory matcher only ever see
/// conditions on documents.
///
/// ```yaml
/// rules:
///   read: {"$or": [{"published": true}, {"owner": "@caller.id"}]}
///   update: {"owner": "@caller.id", "verified": "@previous.verified"}
/// ```
public struct AccessRule: Sendable {
    /// The rule as written.
    public let source: JSONValue
    /// Whether it reads the stored document (`@previous.*`).
    public let usesPrevious: Bool
    /// Whether it depends on the caller or the time at all; a rule that does
    /// not is resolved once.
    let constant: Filter?
    /// Whether it reads `@now` (then it is resolved for every request).
    let usesNow: Bool
    /// Read rules resolved per caller (`ruleFilter(for:)`).
    private let resolved = ResolvedRules()
    /// The parts that depend on the document alone, stamped on rows as
    /// they are written (nil for update rules and rules without such parts).
    public let stamp: RuleStamp?

    /// Reads `source`, refusing it with `where` (the rule's place in the
    /// config, such as `collections.posts.rules.read`) in the message.
    public init(_ source: JSONValue, at place: String, allowPrevious: Bool) throws(RuleError) {
        self.source = source
        var previous = false
        var variables = false
        try Self.checkVariables(source, at: place, allowPrevious: allowPrevious, usesPrevious: &previous, usesVariables: &variables)
        usesPrevious = previous
        usesNow = source.jsonText.contains("\"@now\"")
        // Resolve for both kinds of caller so every refusal is met now, not at a request.
        for sample in [RuleCaller.anonymous, RuleCaller(id: "u", roles: ["r"], admin: false)] {
            do { _ = try Filter(Self.substitute(source, caller: sample, previous: nil, now: Timestamp.now())) } catch {
                throw RuleError("\(place): \(error.message)")
            }
        }
        constant = variables ? nil : try? Filter(Self.substitute(source, caller: .anonymous, previous: nil, now: ""))
        stamp = allowPrevious ? nil : RuleStamp(source)
    }

    /// The filter this rule is for `caller` (and, for an update, the stored
    /// document `previous`). nil when it cannot be made (a caller with more
    /// roles than a list may hold): the caller is then refused, never let through.
    public func resolve(for caller: RuleCaller, previous: JSONValue? = nil) -> Filter? {
        if let constant { return constant }
        return try? Filter(Self.substitute(source, caller: caller, previous: previous, now: Timestamp.now()))
    }

    /// The rule for `caller` as a `RuleFilter`, made once per caller (id and
    /// roles) and kept, unless the rule reads `@now` or `@previous`. nil when
    /// it cannot be made: the caller is refused.
    public func ruleFilter(for caller: RuleCaller) -> RuleFilter? {
        guard !usesNow && !usesPrevious else { return made(for: caller) }
        let key = (caller.id ?? "") + "\u{0}" + (caller.admin ? "a" : "") + "\u{0}" + caller.roles.joined(separator: "\u{0}")
        if let known = resolved.cache.withLock({ $0[key] }) { return known }
        guard let made = made(for: caller) else { return nil }
        resolved.cache.withLock { cache in
            if cache.count >= ResolvedRules.limit { cache.removeAll() }
            cache[key] = made
        }
        return made
    }

    /// The rule for `caller` with its stamped form (`RuleStamp`), one `@now` for both.
    private func made(for caller: RuleCaller) -> RuleFilter? {
        let now = Timestamp.now()
        let filter = constant ?? (try? Filter(Self.substitute(source, caller: caller, previous: nil, now: now)))
        return filter.flatMap { try? RuleFilter($0, stamped: stamp?.resolve(for: caller, now: now)) }
    }

    static let callerVariables: Set<String> = ["@caller.id", "@caller.roles", "@caller.principals", "@caller.signedIn", "@caller.admin", "@now"]

    private static func checkVariables(_ value: JSONValue, at place: String, allowPrevious: Bool,
                                       usesPrevious: inout Bool, usesVariables: inout Bool) throws(RuleError) {
        switch value {
        case .string(let s) where s.hasPrefix("@") && !s.hasPrefix("@@"):
            if callerVariables.contains(s) { usesVariables = true; return }
            if s.hasPrefix("@previous.") {
                guard allowPrevious else { throw RuleError("\(place): \(s) can be used only in update rules (the stored document before the change).") }
                do { _ = try FieldPath(String(s.dropFirst("@previous.".count))) } catch { throw RuleError("\(place): \(s): \(error.message)") }
                usesPrevious = true
                usesVariables = true
                return
            }
            throw RuleError("\(place): \(s) is not a rule variable (use @caller.id, @caller.roles, @caller.principals, @caller.signedIn, @caller.admin, @now or @previous.<field>; write @@ for a literal @).")
        case .array(let items):
            for item in items { try checkVariables(item, at: place, allowPrevious: allowPrevious, usesPrevious: &usesPrevious, usesVariables: &usesVariables) }
        case .object(let object):
            for (key, member) in object {
                if key == "$nearSphere" || key == "$near" {
                    throw RuleError("\(place): \(key) orders a query's results; a rule can use $geoWithin but not \(key).")
                }
                if key == "$geoWithin", case .object(let shape) = member, let name = shape.keys.first(where: { $0 != "$box" && $0 != "$centerSphere" }) {
                    throw RuleError("\(place): a rule's $geoWithin takes $box or $centerSphere (not \(name)), so it means the same on SQLite and PostgreSQL.")
                }
                if key.hasPrefix("@previous.") && allowPrevious {
                    do { _ = try FieldPath(String(key.dropFirst("@previous.".count))) } catch { throw RuleError("\(place): \(key): \(error.message)") }
                    usesPrevious = true
                    usesVariables = true
                } else if key.hasPrefix("@") {
                    guard callerVariables.contains(key) else {
                        throw RuleError("\(place): \(key) is not a caller variable a rule can test (use @caller.id, @caller.roles, @caller.principals, @caller.signedIn, @caller.admin or @now).")
                    }
                    usesVariables = true
                }
                try checkVariables(member, at: place, allowPrevious: allowPrevious, usesPrevious: &usesPrevious, usesVariables: &usesVariables)
            }
        default:
            return
        }
    }

    /// `value` with every variable replaced by what it stands for.
    static func substitute(_ value: JSONValue, caller: RuleCaller, previous: JSONValue?, now: String) -> JSONValue {
        switch value {
        case .string(let s) where s.hasPrefix("@@"):
            return .string(String(s.dropFirst()))
        case .string(let s) where s.hasPrefix("@"):
            switch s {
            case "@caller.id": return caller.id.map { .string($0) } ?? RuleCaller.nobody
            case "@caller.roles": return .array(caller.id == nil ? [] : caller.roles.map { .string($0) })
            case "@caller.principals": return .array(caller.principals.map { .string($0) })
            case "@caller.signedIn": return .bool(caller.id != nil || caller.admin)
            case "@caller.admin": return .bool(caller.admin)
            case "@now": return .string(now)
            default:
                let path = s.dropFirst("@previous.".count).split(separator: ".").map(String.init)
                var current = previous
                for key in path { current = current?.objectValue?[key] }
                return current ?? .null
            }
        case .array(let items):
            return .array(items.map { substitute($0, caller: caller, previous: previous, now: now) })
        case .object(let object):
            var out = JSONObject()
            for (key, member) in object {
                let resolved = substitute(member, caller: caller, previous: previous, now: now)
                guard key.hasPrefix("@") else { out[key] = resolved; continue }
                // A condition on the caller: true drops out of the AND, false makes it false.
                if !holds(key, resolved, caller: caller, previous: previous, now: now) { return never }
            }
            return .object(out)
        default:
            return value
        }
    }

    /// A filter no document matches.
    static let never: JSONValue = .object(JSONObject([("$nor", .array([.object(JSONObject())]))]))

    /// Whether the caller condition `{key: condition}` holds, evaluated by the
    /// filter matcher on a document that describes the caller.
    static func holds(_ key: String, _ condition: JSONValue, caller: RuleCaller, previous: JSONValue?, now: String) -> Bool {
        let about = JSONObject([
            ("id", caller.id.map { .string($0) } ?? .null),
            ("roles", .array(caller.id == nil ? [] : caller.roles.map { .string($0) })),
            ("principals", .array(caller.principals.map { .string($0) })),
            ("signedIn", .bool(caller.id != nil || caller.admin)),
            ("admin", .bool(caller.admin)),
        ])
        let document = JSONValue.object(JSONObject([("@caller", .object(about)), ("@now", .string(now)), ("@previous", previous ?? .null)]))
        guard let matcher = try? FilterMatcher(.object(JSONObject([(key, condition)]))) else { return false }
        return matcher.matches(document)
    }
}

/// A rule's resolutions by caller: a bounded memo, shared by the copies of
/// one `AccessRule` (so by every request under the same config).
final class ResolvedRules: Sendable {
    static let limit = 1024
    let cache: Mutex<[String: RuleFilter]> = Mutex([:])
}

/// A rule Roost cannot read, with its place in the config.
public struct RuleError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
