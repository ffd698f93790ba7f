import EventLoop
import Store

extension LiveHub {
    /// One open stream and what it follows.
    final class Subscriber: @unchecked Sendable {
        let id: Int
        /// Loop-confined, but for its byte accounting (`backlog`, `promise`), which the hub reads.
        let stream: ResponseStream
        let principal: AccessScope.Principal
        /// The user's role names when the stream opened; a membership change ends the stream with `reset`.
        let roles: [String]
        let tokenHash: String?
        let subscription: LiveSubscription
        let since: FeedCursor?
        /// The feed's head when the stream was accepted (without a cursor): it starts there.
        let openedAt: Int64?
        /// The client's address as the throttles key it; counts against `maxPerAddress`.
        let address: String
        /// The signed-in user's id; counts against `maxPerAccount` (nil: anonymous or admin).
        let account: String?
        // Hub thread only:
        var position: Int64 = 0
        /// Each topic's collection and filter, resolved when the stream is admitted.
        var topicFilters: [(collection: String, filter: LiveFilter?)] = []
        /// This round's bytes, handed to the loop at the next flush.
        var buffered: [SharedBytes] = []
        var bufferedBytes = 0
        /// The size of the last event made for it: a catch-up read takes about what fits.
        var lastEventBytes = 0
        /// Told to resync: its stream ends after its bytes are flushed, and it gets nothing more.
        var ending = false
        /// Its scope per collection, with the rules it was resolved from:
        /// a read rule is resolved once per stream, not once per change.
        private var scopes: [String: (level: AccessScope.Level, rules: String?, scope: AccessScope)] = [:]

        init(id: Int, stream: ResponseStream, principal: AccessScope.Principal, roles: [String], tokenHash: String?,
             subscription: LiveSubscription, since: FeedCursor?, openedAt: Int64?, address: String, account: String?) {
            self.id = id
            self.stream = stream
            self.principal = principal
            self.roles = roles
            self.tokenHash = tokenHash
            self.subscription = subscription
            self.since = since
            self.openedAt = openedAt
            self.address = address
            self.account = account
        }

        /// Its scope in `collection` under the collection's current level and
        /// rules (made again only when a reload changed them).
        func scope(in collection: String, level: AccessScope.Level, rules: CollectionRules?) -> AccessScope {
            if let known = scopes[collection], known.level == level, known.rules == rules?.fingerprint { return known.scope }
            let scope = AccessScope(principal: principal, level: level, roles: roles, rules: rules)
            scopes[collection] = (level, rules?.fingerprint, scope)
            return scope
        }

        /// Bytes held for the client: this round's and those handed to its loop but not yet sent.
        var held: Int { bufferedBytes + stream.backlog }

        /// What its filters cost on their last evaluations (cheap subscribers are served first).
        var cost: Int { topicFilters.reduce(0) { $0 + ($1.filter?.lastSteps ?? 0) } }
    }
}
