import EventLoop
import HTTP
import Store

/// The seam between a route and the workers: every job that serves a
/// caller authenticates its request first, exactly once, on the worker
/// thread that runs it (sessions are on disk; the loop never touches it),
/// and hands the handler the `Caller` — or, for a collection, its
/// `AccessScope`. A bad token is the same 401 wherever it is sent, and the
/// handler is never entered for it. Public steps (log-in, sign-up, health)
/// use `StorePools` directly and look nothing up.
struct CallerJobs: Sendable {
    typealias Caller = Authenticator.Caller

    let pools: StorePools
    let access: AccessPolicy
    /// Built once: a job's authentication allocates nothing per request.
    private let authenticate: @Sendable (Request, any DocumentReading) throws -> Caller
    /// A bad token (or a failed look-up) counts as no token.
    private let authenticateLeniently: @Sendable (Request, any DocumentReading) throws -> Caller

    init(pools: StorePools, access: AccessPolicy) {
        self.pools = pools
        self.access = access
        authenticate = { request, reader in try access.caller(request, reader) }
        authenticateLeniently = { request, reader in (try? access.caller(request, reader)) ?? .anonymous }
    }

    /// How a step treats a token that names no live session.
    enum BadToken: Sendable {
        /// 401 `InvalidToken`, before the handler is entered.
        case refuse
        /// The caller is anonymous (the status page, which only lists more for the admin).
        case ignore
    }

    /// Runs `body` on a reader with the caller. It returns a response, or nil
    /// when it handed the request on (to the writer or another pool) and that will answer.
    /// - Parameter failed: runs when the step answers with an error instead (authentication's included).
    /// - Returns: false when the queue was full (503 already sent).
    @discardableResult
    func read(_ request: Request, _ out: ResponseWriter, badToken: BadToken = .refuse, failed: (@Sendable () -> Void)? = nil,
              _ body: @escaping @Sendable (any DocumentReading, Caller) throws -> Response?) -> Bool {
        let authenticate = badToken == .refuse ? self.authenticate : authenticateLeniently
        guard let failed else { return pools.readStep(request, out, authenticate: authenticate, body) }
        let ranPastSlice = StorePools.ranPastSlice
        @Sendable func noting<T>(_ step: () throws -> T) rethrows -> T {
            do { return try step() } catch {
                if !ranPastSlice(error) { failed() }
                throw error
            }
        }
        return pools.readStep(request, out, authenticate: { r, reader in try noting { try authenticate(r, reader) } }) { reader, caller in
            try noting { try body(reader, caller) }
        }
    }

    /// Runs `body` on a reader with the caller's scope in `collection`
    /// (its configured level, or `level` when the area sets its own).
    /// - Parameter short: a read of a few pages (a GET by id) that may run on
    ///   the loop itself (`StorePools.shortReadStep`).
    func read(_ request: Request, _ out: ResponseWriter, in collection: String, level: AccessScope.Level? = nil, short: Bool = false,
              _ body: @escaping @Sendable (any DocumentReading, AccessScope) throws -> Response?) {
        let access = self.access
        let scoped: @Sendable (any DocumentReading, Caller) throws -> Response? = { reader, caller in
            // An area with its own level (files) still has the rules configured for it.
            try body(reader, level.map { AccessScope(principal: caller.principal, level: $0, roles: caller.roles, rules: access.rules(of: collection)) }
                ?? access.scope(caller, in: collection))
        }
        if short {
            pools.shortReadStep(request, out, authenticate: authenticate, scoped)
        } else {
            pools.readStep(request, out, authenticate: authenticate, scoped)
        }
    }

    /// Runs `operation` in the writer's next group commit with the caller,
    /// found inside the transaction (no reader hop). For writes with nothing
    /// to parse; a refused caller still takes the writer slot it was queued for.
    func write(_ request: Request, _ out: ResponseWriter, committed: (@Sendable () -> Void)? = nil,
               _ operation: @escaping @Sendable (any DocumentWriting, Caller) throws -> Response) {
        let access = self.access
        pools.write(request, out, committed: committed) { writer in try operation(writer, try access.caller(request, writer)) }
    }

    /// A write in two steps: `prepare` runs on a reader with the caller
    /// (check what they may do, parse the body), so a refused or malformed
    /// request never takes a writer slot and no body is parsed on the writer
    /// or a loop; then `operation` runs in the writer's next group commit
    /// with what `prepare` returned. If sessions were revoked since the
    /// caller was found, the writer checks the caller's session again: a
    /// write in flight during a log-out does not land after it.
    func write<Prepared: Sendable>(_ request: Request, _ out: ResponseWriter, committed: (@Sendable () -> Void)? = nil,
                                   prepare: @escaping @Sendable (Caller) throws -> Prepared,
                                   _ operation: @escaping @Sendable (any DocumentWriting, Prepared) throws -> Response) {
        let (pools, authenticate, revocations) = (self.pools, self.authenticate, pools.revocations)
        // The count is read before the session is: a revocation it missed moves it later.
        pools.readStep(request, out, authenticate: { r, reader in (revocations.get(), try authenticate(r, reader)) }) { _, found in
            let (seen, caller) = found
            let prepared = try prepare(caller)
            pools.write(request, out, committed: committed) { writer in
                if revocations.get() != seen { try Self.requireLiveSession(caller, writer) }
                return try operation(writer, prepared)
            }
            return nil
        }
    }

    /// 401 `InvalidToken` when the caller's session is gone (in the writer,
    /// for a write whose caller was found on another thread a while ago).
    static func requireLiveSession(_ caller: Caller, _ writer: any AccountsWriting) throws {
        guard let hash = caller.tokenHash, try writer.session(tokenHash: hash, now: Authenticator.now) == nil else { return }
        throw Authenticator.invalidToken
    }

    /// The caller when finding it needs no look-up: anonymous when the
    /// request carries no credentials; nil when a worker must look it up.
    /// Lets a small anonymous write be admitted on the loop and go straight
    /// to the writer (see `CollectionHandlers`).
    static func callerWithoutLookup(_ request: Request) -> Caller? {
        request.headers["Authorization"] == nil ? .anonymous : nil
    }
}

extension Authenticator.Caller {
    /// No credentials.
    static let anonymous = Self(principal: .anonymous, tokenHash: nil, renewDue: false)
}
