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
        /// What it sees (shared with every stream of the same topics and caller), set when it is admitted.
        var view: LiveView!
        /// This round's bytes, handed to the loop at the next flush.
        var buffered: [SharedBytes] = []
        var bufferedBytes = 0
        /// The identities of `buffered`, hashed as they come: streams with the same bytes share one chunk.
        var bufferedHash = 0
        /// The size of the last event made for it: a catch-up read takes about what fits.
        var lastEventBytes = 0
        /// Told to resync: its stream ends after its bytes are flushed, and it gets nothing more.
        var ending = false

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

        /// Bytes held for the client: this round's and those handed to its loop but not yet sent.
        var held: Int { bufferedBytes + stream.backlog }
    }
}
