import JSON

/// A role as the admin API lists it: its name, member count and creation time.
public struct RoleSummary: Sendable, Equatable {
    public let name: String
    public let members: Int
    /// RFC 3339, as `Timestamp.now()` wrote it.
    public let createdAt: String

    public init(name: String, members: Int, createdAt: String) {
        self.name = name
        self.members = members
        self.createdAt = createdAt
    }
}

/// One member of a role: the user's id and username (nil when the account is gone).
public struct RoleMember: Sendable, Equatable {
    public let userID: String
    public let username: String?

    public init(userID: String, username: String?) {
        self.userID = userID
        self.username = username
    }
}

/// What adding a member did.
public enum MembershipChange: Sendable, Equatable {
    case added
    /// The user was a member already (nothing changed, no feed entry).
    case unchanged
    case noSuchRole
    case noSuchUser
}

/// Roles' shared rules, said once for both engines.
public enum Roles {
    /// The internal change-feed collection that membership changes are
    /// recorded under (id: the user's id). Its name starts with `_`, which
    /// no client may subscribe to or sync (`CollectionName`).
    public static let feedCollection = "_roles"

    /// A session row's roles column (comma-separated; role names hold no comma), sorted.
    public static func list(_ column: String?) -> [String] {
        guard let column, !column.isEmpty else { return [] }
        return column.split(separator: ",").map(String.init).sorted()
    }

    /// The entries of `acl`'s `read` and `write` lists that `existing` did
    /// not hold in either list: the ones a write must check. In order, each
    /// with the list it is in (`read` first).
    public static func newPrincipals(_ acl: JSONObject, existing: JSONObject?) -> [(list: String, entry: String)] {
        var known: Set<String> = []
        for list in ["read", "write"] {
            for case .string(let s) in existing?[list]?.arrayValue ?? [] { known.insert(s) }
        }
        var out: [(String, String)] = []
        for list in ["read", "write"] {
            for case .string(let s) in acl[list]?.arrayValue ?? [] where known.insert(s).inserted { out.append((list, s)) }
        }
        return out
    }

    /// The refusal of an `_acl` entry that names no user and no role.
    public static func unknownPrincipal(list: String, entry: String) -> StoreError {
        .invalid("_acl.\(list) names \(JSONWriter.quoted(entry)), which is neither a user id nor role:<name> of an existing role.")
    }
}

extension RolesWriting {
    /// Refuses a document whose `_acl` gained a `read` or `write` entry
    /// (compared with `existing`, the stored `_acl`) that names neither an
    /// existing user id nor `role:<name>` of an existing role: such an
    /// entry would quietly grant nobody. Stale entries already stored pass.
    public func checkACLPrincipals(_ document: JSONObject, existing: JSONObject?) throws {
        guard case .object(let acl)? = document["_acl"] else { return }
        let added = Roles.newPrincipals(acl, existing: existing)
        guard !added.isEmpty else { return }
        let unknown = Set(try unknownPrincipals(added.map(\.entry)))
        if let first = added.first(where: { unknown.contains($0.entry) }) {
            throw Roles.unknownPrincipal(list: first.list, entry: first.entry)
        }
    }
}
