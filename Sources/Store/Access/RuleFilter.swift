import JSON
import Synchronization

/// A read rule resolved for one caller: the `Filter` the engines compile
/// into their SQL, and its `FilterMatcher` for the in-memory paths (live
/// streams, tombstones, silent pushes), made once from the same tree so
/// the SQL and the matcher cannot drift.
public final class RuleFilter: Sendable {
    public let filter: Filter
    /// A matcher holds PCRE2 match data and is not thread-safe: one caller at a time.
    private let matcher: Mutex<FilterMatcher>

    public init(_ filter: Filter) throws(QueryError) {
        self.filter = filter
        matcher = Mutex(try FilterMatcher(filter))
    }

    /// Whether the stored document `document` passes the rule.
    public func matches(_ document: JSONObject) -> Bool {
        matcher.withLock { $0.matches(.object(document)) }
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
