import HTTP
import Store

/// Decides each request's `AccessScope`: who the caller is (through the
/// `Authenticator`) and the collection's configured level.
struct AccessPolicy: Sendable {
    let authenticator: Authenticator
    let config: RoostConfig
    /// Queues a sliding renewal of a session; never delays the request.
    let renew: @Sendable (String) -> Void

    /// The member directory reads like a `shared` collection.
    static let usersCollection = "users"

    func level(of collection: String) -> AccessScope.Level {
        collection == Self.usersCollection ? .shared : config.permission(of: collection)
    }

    /// Fields others may not see: a user's private profile fields.
    func redaction(_ collection: String, _ principal: AccessScope.Principal) -> Redaction? {
        guard collection == Self.usersCollection, principal != .admin else { return nil }
        return Redaction(fields: config.privateUserFields, exceptID: principal.userID)
    }

    /// The caller as seen from a reader thread.
    func caller(_ request: Request, _ reader: DocumentReader) throws -> Authenticator.Caller {
        let caller = try authenticator.caller(request) { try reader.session(tokenHash: $0, now: $1) }
        if caller.renewDue, let hash = caller.tokenHash { renew(hash) }
        return caller
    }

    /// The caller as seen from the writer, inside its transaction.
    func caller(_ request: Request, _ writer: DocumentWriter) throws -> Authenticator.Caller {
        let caller = try authenticator.caller(request) { try writer.session(tokenHash: $0, now: $1) }
        if caller.renewDue, let hash = caller.tokenHash { renew(hash) }
        return caller
    }

    func scope(_ request: Request, _ collection: String, _ reader: DocumentReader) throws -> AccessScope {
        AccessScope(principal: try caller(request, reader).principal, level: level(of: collection))
    }

    func scope(_ request: Request, _ collection: String, _ writer: DocumentWriter) throws -> AccessScope {
        AccessScope(principal: try caller(request, writer).principal, level: level(of: collection))
    }
}
