import HTTP
import JSON
import Store

/// Decides each request's `AccessScope`: who the caller is (through the
/// `Authenticator`) and the collection's configured level.
struct AccessPolicy: Sendable {
    let authenticator: Authenticator
    /// Collection levels and private fields; a SIGHUP reload may change them.
    let settings: ReloadableSettings
    /// Queues a sliding renewal of a session; never delays the request.
    let renew: @Sendable (String) -> Void

    /// The member directory reads like a `shared` collection.
    static let usersCollection = "users"

    func level(of collection: String) -> AccessScope.Level {
        collection == Self.usersCollection ? .shared : settings.permission(of: collection)
    }

    /// The collection's configured access rules (docs/RULES.md); nil: its level alone.
    func rules(of collection: String) -> CollectionRules? {
        settings.rules(of: collection)
    }

    /// Refuses a client's write to a collection only the server writes (the
    /// messaging threads), before any row is looked up: the answer is the
    /// same whatever the id, so it reveals nothing about who talks to whom.
    func checkClientWrite(_ collection: String, _ principal: AccessScope.Principal) throws {
        guard principal != .admin, settings.isServerWritten(collection) else { return }
        throw HTTPError(.forbidden, "\(collection) are written by the server when messages are sent; clients cannot change them.")
    }

    /// Refuses a write that would create a collection the config does not
    /// name when `auto_create_collections` is false (404, as for any
    /// collection that does not exist). Runs in the writer's transaction.
    func checkMayCreate(_ collection: String, _ writer: any SchemaWriting) throws {
        guard !settings.mayCreate(collection), try !writer.collectionExists(collection) else { return }
        throw HTTPError.notFound("No collection \(collection): this server creates only the collections its config names (auto_create_collections is false).")
    }

    /// Fields others may not see: a user's private profile fields.
    func redaction(_ collection: String, _ principal: AccessScope.Principal) -> Redaction? {
        guard collection == Self.usersCollection, principal != .admin else { return nil }
        return Redaction(fields: settings.privateUserFields, exceptID: principal.userID)
    }

    /// Refuses filters and sorts that name a field the caller cannot see, so
    /// hidden values cannot be probed by matching on them.
    func checkHiddenFields(_ collection: String, _ principal: AccessScope.Principal, filter: JSONValue, sort: [String]) throws {
        guard let redaction = redaction(collection, principal), !redaction.fields.isEmpty else { return }
        let hidden = Set(redaction.fields)
        let named = sort + Self.fieldPaths(in: filter)
        if let field = named.first(where: { hidden.contains(String($0.split(separator: ".").first ?? "")) }) {
            throw HTTPError(.invalidQuery, "\"\(field)\" is private to each user and cannot be queried or sorted on.")
        }
    }

    /// Every field path a filter names, at any depth.
    static func fieldPaths(in value: JSONValue) -> [String] {
        switch value {
        case .object(let o):
            return o.flatMap { key, child in (key.hasPrefix("$") ? [] : [key]) + fieldPaths(in: child) }
        case .array(let a):
            return a.flatMap(fieldPaths(in:))
        default:
            return []
        }
    }

    /// The caller, from a reader or from the writer inside its transaction;
    /// queues a sliding renewal of the session when one is due. Only the
    /// job seam (`CallerJobs`) calls this: handlers are handed the caller.
    func caller(_ request: Request, _ sessions: any SessionLookup) throws -> Authenticator.Caller {
        let caller = try authenticator.caller(request) { try sessions.session(tokenHash: $0, now: $1) }
        if caller.renewDue, let hash = caller.tokenHash { renew(hash) }
        // The loop charges this token's rate limits to its account from now on.
        if let token = request.bearerToken {
            switch caller.principal {
            case .user(let id): settings.limits.tokens.remember(token, as: .user(id))
            case .admin: settings.limits.tokens.remember(token, as: .admin)
            case .anonymous: break
            }
        }
        return caller
    }

    /// The caller's scope in `collection`: its level, its rules resolved for the caller and their roles.
    func scope(_ caller: Authenticator.Caller, in collection: String) -> AccessScope {
        scope(caller.principal, roles: caller.roles, in: collection)
    }

    func scope(_ principal: AccessScope.Principal, roles: [String], in collection: String) -> AccessScope {
        AccessScope(principal: principal, level: level(of: collection), roles: roles, rules: rules(of: collection))
    }

    /// Nothing for the admin; else 401 (no token) or 403 (a user's).
    static func requireAdmin(_ principal: AccessScope.Principal) throws {
        switch principal {
        case .admin: return
        case .anonymous: throw HTTPError(.unauthorized, "The admin API needs the admin token.")
        case .user: throw HTTPError(.forbidden, "The admin API needs the admin token.")
        }
    }
}
