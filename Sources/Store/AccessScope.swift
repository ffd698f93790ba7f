import JSON

/// Who is asking, and under which collection permission level: rules
/// (`readRule`, `writeRule`) each engine turns into its SQL
/// (`AccessScope+SQLite`, `PostgresAccess`) so that reads never see, and
/// writes never touch, a row the caller may not. Rows carry `_acl: {"creator": id, "read": [ids], "write": [ids]}`.
public struct AccessScope: Sendable {
    /// A collection's permission level.
    public enum Level: String, Sendable, CaseIterable {
        /// Anyone reads and writes, anonymous included.
        case `public`
        /// Signed-in users read; the creator (and the ACL's writers) write.
        case shared
        /// The creator and those the ACL lists read and write.
        case `private`
        /// Signed-in users read; only admins write.
        case readonly
    }

    public enum Principal: Sendable, Equatable {
        case anonymous
        case user(String)
        case admin

        public var userID: String? {
            if case .user(let id) = self { return id }
            return nil
        }
    }

    public let principal: Principal
    public let level: Level

    public init(principal: Principal, level: Level) {
        self.principal = principal
        self.level = level
    }

    /// Internal work (migrations, hooks) sees everything.
    public static let system = AccessScope(principal: .admin, level: .public)

    /// Why an operation is refused before any SQL runs.
    public enum Denial: Error, Sendable {
        /// Sign in first (401).
        case signInRequired
        /// Signed in, but not allowed (403).
        case forbidden(String)
    }

    /// May this caller read the collection at all? (401 for anonymous on non-public levels.)
    public func checkCollectionRead() throws(Denial) {
        if principal == .anonymous && level != .public { throw .signInRequired }
    }

    /// May this caller create documents in the collection?
    public func checkCreate() throws(Denial) {
        switch (principal, level) {
        case (.admin, _), (_, .public): return
        case (.anonymous, _): throw .signInRequired
        case (.user, .readonly): throw .forbidden("Only administrators write to this collection.")
        case (.user, _): return
        }
    }

    /// Whether a client-chosen `_id` may be used to create here. In a private
    /// collection a user may only create ids in their own namespace,
    /// `<user id>:…`, so whether some other id is taken (by a row the caller
    /// cannot see) is never revealed: other ids are refused whether taken or
    /// free. Admins and other levels, where every row is visible to anyone
    /// who may create, are not limited.
    public func mayChoose(id: String) -> Bool {
        guard level == .private, case .user(let me) = principal else { return true }
        return id.hasPrefix(me + ":") && id.utf8.count > me.utf8.count + 1
    }

    /// The namespace rule of `mayChoose(id:)` as a sentence for errors.
    public var idNamespaceRule: String {
        "In a private collection an _id you choose must start with your user id and ':' (\"\(principal.userID ?? "")\":…); leave _id out to get a server-made one."
    }

    /// Which rows a caller may read or write, as data each engine renders to SQL.
    public enum RowRule: Sendable, Equatable {
        case all
        case none
        /// Rows whose `_acl` names `user` as the creator or in one of the lists `in`.
        case listed(user: String, in: [String])
    }

    /// The rows this caller may read.
    public var readRule: RowRule {
        switch (principal, level) {
        case (.admin, _), (_, .public), (.user, .shared), (.user, .readonly): return .all
        case (.anonymous, _): return .none
        case (.user(let id), .private): return .listed(user: id, in: ["creator", "read", "write"])
        }
    }

    /// The rows this caller may change.
    public var writeRule: RowRule {
        switch (principal, level) {
        case (.admin, _), (_, .public): return .all
        case (.anonymous, _), (.user, .readonly): return .none
        case (.user(let id), .shared), (.user(let id), .private): return .listed(user: id, in: ["creator", "write"])
        }
    }

    /// The caller's id as it appears, quoted, in the JSON text of any state
    /// whose `_acl` names them: a necessary condition for
    /// `readPredicate(state:)` that a substring search tests without parsing
    /// the JSON. nil when every row is visible, or when the id holds a
    /// character a JSON writer might escape.
    public var quotedReaderID: String? {
        guard case .listed(let user, _) = readRule,
              user.utf8.allSatisfy({ $0.isASCIIAlphanumeric || "-_.:@".utf8.contains($0) }) else { return nil }
        return "\"" + user + "\""
    }

    /// The users a stored document's `_acl` lets read it: its creator and
    /// everyone in `read` or `write`.
    package static func readers(of document: JSONObject) -> Set<String> {
        guard case .object(let acl)? = document["_acl"] else { return [] }
        var out: Set<String> = []
        if case .string(let creator)? = acl["creator"] { out.insert(creator) }
        for list in ["read", "write"] {
            for case .string(let uid) in acl[list]?.arrayValue ?? [] { out.insert(uid) }
        }
        return out
    }

    /// The in-memory twin of `readPredicate`: may this caller read an entity
    /// whose `_acl` is `acl`? (For tombstones and live events: no SQL.)
    public func canRead(acl: JSONObject?) -> Bool {
        switch (principal, level) {
        case (.admin, _), (_, .public), (.user, .shared), (.user, .readonly): return true
        case (.anonymous, _): return false
        case (.user(let id), .private):
            guard let acl else { return false }
            if acl["creator"] == .string(id) { return true }
            return ["read", "write"].contains { acl[$0]?.arrayValue?.contains(.string(id)) ?? false }
        }
    }

    /// The `_acl` for a new document: the creator comes from the session,
    /// never the client; `read` and `write` lists are the client's, checked.
    public func newACL(from client: JSONValue?) throws(StoreError) -> JSONObject {
        var acl = JSONObject()
        acl["creator"] = principal.userID.map { .string($0) } ?? .null
        try Self.copyLists(from: client, into: &acl)
        return acl
    }

    /// The `_acl` after an update: the creator stays; writers may change the lists.
    public func updatedACL(existing: JSONObject?, client: JSONValue?) throws(StoreError) -> JSONObject {
        var acl = JSONObject()
        acl["creator"] = existing?["creator"] ?? .null
        acl["read"] = existing?["read"]
        acl["write"] = existing?["write"]
        if let client {
            if case .object(let o) = client, let creator = o["creator"], creator != acl["creator"] ?? .null {
                throw .invalid("_acl.creator is set by the server and cannot be changed.")
            }
            try Self.copyLists(from: client, into: &acl)
        }
        return acl
    }

    private static func copyLists(from client: JSONValue?, into acl: inout JSONObject) throws(StoreError) {
        guard let client else { return }
        guard case .object(let o) = client else { throw .invalid("_acl must be an object.") }
        for (key, value) in o {
            switch key {
            case "creator": continue
            case "read", "write":
                guard case .array(let ids) = value, ids.allSatisfy({ $0.stringValue != nil }), ids.count <= 1000 else {
                    throw .invalid("_acl.\(key) must be an array of user ids.")
                }
                acl[key] = value
            default:
                throw .invalid("_acl may hold only creator, read and write (found \"\(key)\").")
            }
        }
    }
}

private extension UInt8 {
    var isASCIIAlphanumeric: Bool { (48...57).contains(self) || (65...90).contains(self) || (97...122).contains(self) }
}
