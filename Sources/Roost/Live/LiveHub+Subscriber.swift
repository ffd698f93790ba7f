import EventLoop
import Store

extension LiveHub {
    /// One open stream and what it follows.
    final class Subscriber: @unchecked Sendable {
        let id: Int
        /// Loop-confined: touched only through `stream.loop.execute`.
        let stream: ResponseStream
        let principal: AccessScope.Principal
        let tokenHash: String?
        let subscription: LiveSubscription
        let since: FeedCursor?
        /// The client's address as the throttles key it; counts against `maxPerAddress`.
        let address: String
        // Hub thread only:
        var position: Int64 = 0
        /// Each topic's collection and filter, resolved when the stream is admitted.
        var topicFilters: [(collection: String, filter: LiveFilter?)] = []
        /// This round's bytes, handed to the loop at the next flush.
        var buffered: [UInt8] = []

        init(id: Int, stream: ResponseStream, principal: AccessScope.Principal, tokenHash: String?,
             subscription: LiveSubscription, since: FeedCursor?, address: String) {
            self.id = id
            self.stream = stream
            self.principal = principal
            self.tokenHash = tokenHash
            self.subscription = subscription
            self.since = since
            self.address = address
        }
    }
}
