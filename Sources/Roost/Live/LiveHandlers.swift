import EventLoop
import HTTP
import JSON
import Store

/// `GET /events?subscribe=[…]` and `GET /:collection/_live?query=…`: live
/// updates as Server-Sent Events. The caller is checked on a reader (token
/// from `Authorization`, or `?access_token=` for browsers' `EventSource`),
/// then the stream starts on its loop and the `LiveHub` feeds it.
struct LiveHandlers: Sendable {
    let jobs: CallerJobs
    let hub: LiveHub

    func events(_ request: Request, _ out: ResponseWriter) {
        subscribe(request, out) { try LiveSubscription.parse(subscribe: request.query["subscribe"]) }
    }

    func collection(_ name: String, _ request: Request, _ out: ResponseWriter) {
        subscribe(request, out) { try LiveSubscription.one(name, query: try ListParameters.filter(request)) }
    }

    private func subscribe(_ raw: Request, _ out: ResponseWriter, _ make: @escaping @Sendable () throws -> LiveSubscription) {
        let request = Self.withQueryToken(raw)
        // The address as the throttles see it (behind trusted proxies, the forwarded client).
        let address = LoginThrottle.addressKey(request.remoteAddress)
        // A cheap early answer on the loop when the server or this address is
        // full; the slot itself is taken only once the caller is known.
        if let refusal = hub.wouldRefuse(address: address) { return out.send(answer(refusal).response) }
        let (access, hub) = (jobs.access, self.hub)
        jobs.read(request, out) { reader, caller in
            let subscription = try make()
            var conditions = 0
            for topic in subscription.topics {
                let scope = topic.collection == "files"
                    ? AccessScope(principal: caller.principal, level: hub.filesLevel, roles: caller.roles, rules: access.rules(of: "files"))
                    : access.scope(caller, in: topic.collection)
                try scope.checkCollectionRead()
                try access.checkHiddenFields(topic.collection, caller.principal, filter: topic.filter, sort: [])
                conditions += try Filter(topic.filter).conditions // a bad filter is a 400 now, not a silent stream
            }
            guard conditions <= LiveBudget.maxConditionsPerStream else {
                throw HTTPError(.invalidQuery, "A live stream's queries may have at most \(LiveBudget.maxConditionsPerStream) conditions together (operators and $all values, each counted once per part of its field path); this one has \(conditions).")
            }
            let since = try Self.cursor(request, try reader.cursorSeal())
            // Read before the headers go out: a change committed once the
            // client sees the stream open is after this and reaches it.
            let openedAt = since == nil ? try reader.feedHead() : nil
            // Last, once nothing else can refuse the stream: a bad token, query or cursor took no slot.
            if let refusal = hub.reserve(address: address, account: caller.principal.userID) { throw answer(refusal) }
            let headers = Headers([("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                                   ("X-Accel-Buffering", "no")])
            out.stream(headers: headers, timeoutSeconds: Int32(hub.heartbeat * 2 + 30)) { stream in
                hub.add(stream: stream, principal: caller.principal, roles: caller.roles, tokenHash: caller.tokenHash,
                        subscription: subscription, since: since, openedAt: openedAt, address: address)
            }
            return nil
        }
    }

    /// The answer to a refused stream: 503 when the server is full, 429 past a per-address or per-account limit.
    private func answer(_ refusal: LiveHub.Refusal) -> HTTPError {
        switch refusal {
        case .full:
            return Overload.liveStreams.error
        case .perAddress:
            return HTTPError(.tooManyStreams,
                             "This address has \(hub.maxPerAddress) live streams open already (live_max_per_address); close one or try again later.",
                             headers: Headers([("Retry-After", "30")]))
        case .perAccount:
            return HTTPError(.tooManyStreams,
                             "This account has \(hub.maxPerAccount) live streams open already (live_max_per_account); close one or try again later.",
                             headers: Headers([("Retry-After", "30")]))
        }
    }

    /// `Last-Event-ID` (a reconnecting `EventSource`) or `?since=`.
    /// A token another database sealed comes back as `FeedCursor.foreign`: the stream starts with a `reset`.
    static func cursor(_ request: Request, _ seal: CursorSeal) throws -> FeedCursor? {
        guard let text = request.headers["Last-Event-ID"] ?? request.query["since"], !text.isEmpty else { return nil }
        guard let cursor = seal.open(text) else {
            throw HTTPError(.invalidCursor, "Last-Event-ID (or since) must be an event id this server sent.")
        }
        return cursor
    }

    /// Browsers' `EventSource` cannot set headers: `?access_token=` stands in
    /// for `Authorization: Bearer` (the access log never shows query strings).
    static func withQueryToken(_ request: Request) -> Request {
        guard request.headers["Authorization"] == nil, let token = request.query["access_token"], !token.isEmpty else { return request }
        var headers = request.headers
        headers.add("Authorization", "Bearer " + token)
        return Request(method: request.method, path: request.path, segments: request.segments, query: request.query,
                       headers: headers, body: request.body, requestID: request.requestID, remoteAddress: request.remoteAddress)
    }
}
