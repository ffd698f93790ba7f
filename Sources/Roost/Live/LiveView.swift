import Store

/// What a group of subscribers see: the same topics (collections and
/// filters) asked by the same caller (principal and roles). Every change
/// makes the same event for all of them, so the fan-out decides it once per
/// view, not once per subscriber (`LiveHub.event(_:_:for:)`), and their
/// streams share one prepared chunk a round. Hub thread only.
final class LiveView {
    let key: String
    let principal: AccessScope.Principal
    let roles: [String]
    /// The signed-in user's id (nil: anonymous or admin): a `_roles` entry for it ends the view's streams.
    var account: String? { principal.userID }
    /// Each topic's collection and filter, resolved when the first subscriber came.
    let topicFilters: [(collection: String, filter: LiveFilter?)]
    /// Its scope per collection, with the rules it was resolved from:
    /// a read rule is resolved once per view, not once per change.
    private var scopes: [String: (level: AccessScope.Level, rules: String?, scope: AccessScope)] = [:]

    init(key: String, principal: AccessScope.Principal, roles: [String], topicFilters: [(collection: String, filter: LiveFilter?)]) {
        self.key = key
        self.principal = principal
        self.roles = roles
        self.topicFilters = topicFilters
    }

    /// The view a stream belongs to: the same for two streams exactly when
    /// every change makes the same event for both.
    static func key(principal: AccessScope.Principal, roles: [String], subscription: LiveSubscription) -> String {
        let who: String
        switch principal {
        case .anonymous: who = "a"
        case .admin: who = "A"
        case .user(let id): who = "u" + id + "\u{1}" + roles.joined(separator: "\u{1}")
        }
        return subscription.topics.reduce(who) { $0 + "\u{0}" + $1.collection + "\u{1}" + $1.key }
    }

    /// Its scope in `collection` under the collection's current level and
    /// rules (made again only when a reload changed them).
    func scope(in collection: String, level: AccessScope.Level, rules: CollectionRules?) -> AccessScope {
        if let known = scopes[collection], known.level == level, known.rules == rules?.fingerprint { return known.scope }
        let scope = AccessScope(principal: principal, level: level, roles: roles, rules: rules)
        scopes[collection] = (level, rules?.fingerprint, scope)
        return scope
    }

    /// What its filters cost on their last evaluations (cheap views are served first).
    var cost: Int { topicFilters.reduce(0) { $0 + ($1.filter?.lastSteps ?? 0) } }
}
