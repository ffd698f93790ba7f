import Auth
import Foundation
import HTTP
import Logging
import Store

/// Turns a request's bearer token into a principal: anonymous without one,
/// admin for the operator's token, else the user of a live session.
struct Authenticator: Sendable {
    /// The operator's credential (`admin_token`, or the one created in the console).
    let admin: AdminCredential
    let sessionLifetime: Int64
    let logger: Logger

    /// The caller, and the session to renew if it is due (sliding expiry).
    struct Caller: Sendable {
        let principal: AccessScope.Principal
        let tokenHash: String?
        let renewDue: Bool
        /// The user's roles, sorted, read with the session (anonymous and admin: none);
        /// a membership change counts from the next request.
        var roles: [String] = []
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    static let invalidToken = HTTPError(.invalidToken, "The session token is invalid, expired or revoked; sign in again.",
                                        headers: Headers([("WWW-Authenticate", "Bearer realm=\"roost\", error=\"invalid_token\"")]))

    /// True when the request carries the operator's token (checked in
    /// constant time; not logged: for frequent callers such as a scraper).
    func isAdmin(_ request: Request) -> Bool {
        guard let token = request.bearerToken else { return false }
        return admin.matches(tokenHash: SessionToken.hash(token))
    }

    /// - Parameter lookup: finds a live session by token hash (reader or writer connection).
    func caller(_ request: Request, lookup: (String, Int64) throws -> SessionRecord?) throws -> Caller {
        guard let token = request.bearerToken else {
            if request.headers["Authorization"] != nil { throw Self.invalidToken }
            return Caller(principal: .anonymous, tokenHash: nil, renewDue: false)
        }
        let hash = SessionToken.hash(token)
        if admin.matches(tokenHash: hash) {
            logger.notice("admin credential used", metadata: [
                "request_id": "\(request.requestID)", "method": "\(request.method.rawValue)", "path": "\(request.path)",
                "remote": "\(request.remoteAddress)",
            ])
            return Caller(principal: .admin, tokenHash: nil, renewDue: false)
        }
        let now = Self.now
        guard let session = try lookup(hash, now) else { throw Self.invalidToken }
        return Caller(principal: .user(session.userID), tokenHash: hash, renewDue: now - session.lastSeen > 3600, roles: session.roles)
    }
}
