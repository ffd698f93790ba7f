import EventLoop
import Store

extension LiveHub {
    /// One open stream and what it follows.
    final class Subscriber: @unchecked Sendable {
        let id: Int
        /// Loop-confined, but for its byte accounting (`backlog`, `promise`), which the hub reads.
        let stream: ResponseStream
        let principal: AccessScope.Principal
        let tokenHash: String?
        let subscription: LiveSubscription
        let since: FeedCursor?
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

        init(id: Int, stream: ResponseStream, principal: AccessScope.Principal, tokenHash: String?,
             subscription: LiveSubscription, since: FeedCursor?, address: String, account: String?) {
            self.id = id
            self.stream = stream
            self.principal = principal
            self.tokenHash = tokenHash
            self.subscription = subscription
            self.since = since
            self.address = address
            self.account = account
        }

        /// Bytes held for the client: this round's and those handed to its loop but not yet sent.
        var held: Int { bufferedBytes + stream.backlog }

        /// What its filters cost on their last evaluations (cheap subscribers are served first).
        var cost: Int { topicFilters.reduce(0) { $0 + ($1.filter?.lastSteps ?? 0) } }
    }
}
