import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the client's session stands, as ``RoostClient/sessionStates()`` reports it.
public enum SessionState: Sendable, Equatable {
    /// Signed in as this user (after sign-up, log-in, or restored at launch).
    case signedIn(RoostUser)
    /// Signed out by the app (``RoostClient/logOut()``, ``RoostClient/deleteAccount(condition:)``), or never signed in.
    case signedOut
    /// The server no longer accepts the session (expired, revoked by a password
    /// change or a log-out elsewhere): it is forgotten here. An ``OfflineStore``
    /// keeps its outbox; it is sent after the next log-in as the same user.
    case expired
}

extension RoostClient {
    /// The session's state now, then each change: sign-in, sign-out, and
    /// expiry (the first 401 the server answers to this session's token).
    ///
    /// ```swift
    /// for await state in roost.sessionStates() {
    ///     if state == .expired { showLogIn() }
    /// }
    /// ```
    public func sessionStates() -> AsyncStream<SessionState> {
        let (stream, continuation) = AsyncStream<SessionState>.makeStream(bufferingPolicy: .unbounded)
        let key = UUID()
        continuation.onTermination = { [weak self] _ in _ = self?.sessionWatchers.update { $0.removeValue(forKey: key) } }
        sessionWatchers.update { $0[key] = continuation }
        continuation.yield(session.map { .signedIn($0.user) } ?? .signedOut)
        return stream
    }

    func announce(_ state: SessionState) {
        for watcher in sessionWatchers.value.values { watcher.yield(state) }
    }

    /// A 401 refusing the current session's token (`InvalidToken`,
    /// `Unauthorized`) ends the session here: it is cleared from the token
    /// store and ``SessionState/expired`` announced. A 401 for something the
    /// request carried (a wrong password, a refused ID token while linking) or
    /// to an older token is ignored.
    func noteUnauthorized(_ request: URLRequest, _ response: HTTPURLResponse, _ body: Data) {
        let code = ServerError(response: response, body: body).code
        guard let sent = request.value(forHTTPHeaderField: "Authorization"),
              code == .invalidToken || code == .unauthorized else { return }
        let ended = state.update { current -> Bool in
            guard let token = current?.token, sent == "Bearer \(token)" else { return false }
            current = nil
            return true
        }
        guard ended else { return }
        try? tokenStore.clear()
        announce(.expired)
    }
}
