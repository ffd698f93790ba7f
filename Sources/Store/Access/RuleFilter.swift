import JSON
import Synchronization

/// A rule resolved for one caller: the `Filter` the engines compile
/// into their SQL, and its `FilterMatcher` for the in-memory paths (live
/// streams, tombstones, silent pushes), made from the same tree so the SQL
/// and the matcher cannot drift. Made once per caller and rule
/// (`AccessRule.ruleFilter(for:)`), so a request pays neither the
/// resolution nor the SQL rendering again.
public final class RuleFilter: Sendable {
    public let filter: Filter
    /// The same rule over rows' stamps (`RuleStamp`), for engines that keep them.
    public let stamped: StampedRule?
    /// A matcher holds PCRE2 match data and is not thread-safe: one caller at a time.
    private let matcher: Mutex<FilterMatcher>
    /// Rendered SQL by engine and document: text split at its value markers,
    /// and the values by marker number (`sql(key:bind:render:)`).
    private let rendered: Mutex<[String: (text: [Substring], values: [SQLValue])]> = Mutex([:])

    public init(_ filter: Filter, stamped: StampedRule? = nil) throws(QueryError) {
        self.filter = filter
        self.stamped = stamped
        matcher = Mutex(try FilterMatcher(filter))
    }

    /// Whether the stored document `document` passes the rule.
    public func matches(_ document: JSONObject) -> Bool {
        matcher.withLock { $0.matches(.object(document)) }
    }

    /// The rule's SQL for the statement being built: rendered once per `key`
    /// (the engine, the document expression, the indexes it may probe) with
    /// numbered markers for its values, then each value bound through `bind`
    /// once, in order, wherever its marker stands.
    package func sql(key: String, bind: (SQLValue) -> String, render: ((SQLValue) -> String) throws -> String) rethrows -> String {
        let known = rendered.withLock { $0[key] }
        let template: (text: [Substring], values: [SQLValue])
        if let known {
            template = known
        } else {
            var values: [SQLValue] = []
            let text = try render { value in
                values.append(value)
                return "\u{1}\(values.count - 1)\u{1}"
            }
            // Text and marker numbers alternate: text, 0, text, 1, text…
            template = (text.split(separator: "\u{1}", omittingEmptySubsequences: false), values)
            rendered.withLock { cache in
                if cache.count >= 4 { cache.removeAll() }
                cache[key] = template
            }
        }
        var placeholders: [String?] = Array(repeating: nil, count: template.values.count)
        var out = ""
        for (position, part) in template.text.enumerated() {
            guard position % 2 == 1, let index = Int(part) else { out += part; continue }
            if placeholders[index] == nil { placeholders[index] = bind(template.values[index]) }
            out += placeholders[index]!
        }
        return out
    }

    /// The rule as an `AccessScope.RowRule`: `.all` and `.none` when it does
    /// not depend on the document, so the engines add no SQL for it.
    var rowRule: AccessScope.RowRule {
        if filter.matchesAll { return .all }
        if filter.matchesNothing { return .none }
        return .matching(self)
    }
}

extension Filter {
    /// True when no document can match: a rule whose conditions on the
    /// caller failed (`AccessRule.never`, `{"$nor": [{}]}`) at the top level.
    public var matchesNothing: Bool {
        clauses.contains { clause in
            if case .group(.nor, let branches) = clause { return branches.contains { $0.isEmpty } }
            return false
        }
    }
}
