import Daemon
import HTTP
import Metrics

/// The rate limits as the event loop applies them, once a request is routed
/// and before its handler queues any work: which class the route and method
/// are, whose budget pays (the account of a token a worker verified lately,
/// else the client address as `trusted_proxies` resolves it; the admin
/// token pays nothing), and the 429 when the budget is spent.
struct RequestLimits: Sendable {
    let limiter: RateLimiter
    let tokens: VerifiedTokens
    /// `roost_rate_limited_total{class}` by `RateClass.rawValue`, made once (they read 0 from the start).
    private let refused: [Metrics.Counter]

    init(_ limits: RoostConfig.RateLimits) {
        limiter = RateLimiter(limits)
        tokens = VerifiedTokens(capacity: limits.callers)
        refused = RateClass.allCases.map { RoostMetrics.rateLimited($0.name) }
    }

    /// The limited routes by template and method; every other request is free.
    static let classes: [String: [Request.Method: RateClass]] = {
        let write: [Request.Method: RateClass] = [.put: .writes, .patch: .writes, .delete: .writes]
        return [
            "/:collection": [.post: .writes], "/:collection/:id": write, "/users/:id": write, "/files/:id": [.delete: .writes],
            "/_batch": [.post: .batches], "/files": [.post: .uploads], "/users": [.post: .signups], "/auth/anonymous": [.post: .signups],
            "/events": [.get: .liveStreams], "/:collection/_live": [.get: .liveStreams],
            "/users/_live": [.get: .liveStreams], "/files/_live": [.get: .liveStreams],
        ]
    }()

    /// The 429 for `request` on the route `template` when its caller's budget
    /// is spent; nil when it may go on (its cost is then spent).
    func refusal(_ request: Request, route template: String) -> Response? {
        guard let kind = Self.classes[template]?[request.method], let caller = callerKey(request, kind) else { return nil }
        let key = RateLimiter.Key(kind: kind, caller: caller)
        if let wait = limiter.spend(key) { return refuse(kind, wait: wait) }
        guard kind.spendsBytes, !request.body.isEmpty else { return nil }
        if let wait = limiter.spend(RateLimiter.Key(kind: .writeBytes, caller: caller), cost: Double(request.body.count)) {
            limiter.refund(key)
            return refuse(.writeBytes, wait: wait)
        }
        return nil
    }

    /// `u:<user id>` for a token verified lately, nil for the admin's, else
    /// `a:<address>` (no token, or one not verified: a made-up token is an address).
    /// Sign-ups are always by address.
    func callerKey(_ request: Request, _ kind: RateClass) -> String? {
        if kind != .signups, let token = Self.token(request, kind) {
            switch tokens.identity(of: token) {
            case .admin?: return nil
            case .user(let id)?: return "u:" + id
            case nil: break
            }
        }
        return "a:" + LoginThrottle.addressKey(request.remoteAddress)
    }

    /// The bearer token, or for a live stream without `Authorization` its
    /// `?access_token=` (as `LiveHandlers.withQueryToken` reads it).
    static func token(_ request: Request, _ kind: RateClass) -> String? {
        if kind == .liveStreams, request.headers["Authorization"] == nil {
            return request.query["access_token"].flatMap { $0.isEmpty ? nil : $0 }
        }
        return request.bearerToken
    }

    /// Charges `userID`'s `push_recipients` budget with a message's `recipients`, before
    /// anything of it is written: nil when allowed, else the 429 to refuse the message with.
    func chargePushRecipients(userID: String, recipients: Int) -> HTTPError? {
        guard recipients > 0,
              let wait = limiter.spend(RateLimiter.Key(kind: .pushRecipients, caller: "u:" + userID), cost: Double(recipients)) else { return nil }
        return refusal(.pushRecipients, wait: wait)
    }

    private func refuse(_ kind: RateClass, wait: Double) -> Response { refusal(kind, wait: wait).response }

    private func refusal(_ kind: RateClass, wait: Double) -> HTTPError {
        refused[kind.rawValue].increment()
        let seconds = max(1, Int(wait.rounded(.up)))
        return HTTPError(.rateLimited, "Too many \(kind.noun) from this caller; try again in \(seconds) s (rate_limits.\(kind.name)).",
                         headers: Headers([("Retry-After", String(seconds))]))
    }
}

extension RateClass {
    /// What the budget counts, for the 429's description.
    var noun: String {
        switch self {
        case .writes: return "writes"
        case .writeBytes: return "bytes written"
        case .batches: return "batches"
        case .uploads: return "uploads"
        case .signups: return "sign-ups"
        case .liveStreams: return "live stream opens"
        case .pushRecipients: return "push notification recipients"
        }
    }
}
