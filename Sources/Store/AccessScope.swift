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
    /// The caller's role names (without `role:`): `_acl` lists may name
    /// `role:<name>`, and rules test them as `@caller.roles`.
    public let roles: [String]
    /// The collection's configured rules (nil: its level alone decides).
    public let rules: CollectionRules?
    /// The rows this caller may read, decided once when the scope is made.
    public let readRule: RowRule

    public init(principal: Principal, level: Level, roles: [String] = [], rules: CollectionRules? = nil) {
        self.principal = principal
        self.level = level
        self.roles = principal.userID == nil ? [] : roles
        self.rules = rules
        readRule = Self.readRule(principal, level, roles: self.roles, rules: rules)
    }

    /// What a sync cursor records of how it was read: the level, the read
    /// rule and the caller's roles (`level@collection` when there are
    /// none, as before). A cursor read under another tag answers 410, so a
    /// changed rule or role membership makes the device sync again.
    public func syncTag(_ collection: String) -> String {
        var tag = level.rawValue
        if let read = rules?.read { tag += "+r" + Digest.fnv1a(read.source.jsonText) }
        if !roles.isEmpty { tag += "+g" + Digest.fnv1a(roles.sorted().joined(separator: "\n")) }
        return tag + "@" + collection
    }

    /// The caller as rules see it.
    public var caller: RuleCaller {
        RuleCaller(id: principal.userID, roles: roles, admin: principal == .admin)
    }

    /// The users and roles `_acl` lists may name for this caller: the user
    /// id and `role:<name>` for each role.
    public var principals: [String] { caller.principals }

    /// Internal work (migrations, hooks) sees everything.
    public static let system = AccessScope(principal: .admin, level: .public)

    /// Whether an update may clear `_acl.creator` (set it to null): only the
    /// system's, for a deleted user's documents (`on_user_delete: anonymise`).
    public private(set) var clearsCreator = false

    /// The system, keeping a deleted user's documents without their creator.
    public static let disowning: AccessScope = {
        var scope = AccessScope.system
        scope.clearsCreator = true
        return scope
    }()

    /// Why an operation is refused before any SQL runs.
    public enum Denial: Error, Sendable {
        /// Sign in first (401).
        case signInRequired
        /// Signed in, but not allowed (403).
        case forbidden(String)
        /// Signed in, but a configured rule refuses the write (403 `AccessRuleDenied`).
        case ruleDenied(String)
    }

    /// May this caller read the collection at all? 401 for an anonymous
    /// caller who could read nothing in it (a non-public level, or a read
    /// rule that admits no anonymous caller).
    public func checkCollectionRead() throws(Denial) {
        guard principal == .anonymous else { return }
        if rules?.read != nil {
            if case .none = readRule { throw .signInRequired }
            return
        }
        if level != .public { throw .signInRequired }
    }

    /// May this caller create documents in the collection at all? With a
    /// `create` rule, refused here only when the rule's conditions on the
    /// caller alone already fail; the document is judged by
    /// `checkCreate(document:)`.
    public func checkCreate() throws(Denial) {
        if principal == .admin { return }
        if let create = rules?.create {
            guard let rule = create.ruleFilter(for: caller), !rule.filter.matchesNothing else { throw refusal("create") }
            return
        }
        switch (principal, level) {
        case (.admin, _), (_, .public): return
        case (.anonymous, _): throw .signInRequired
        case (.user, .readonly): throw .forbidden("Only administrators write to this collection.")
        case (.user, _): return
        }
    }

    /// Whether a client-chosen `_id` may be used to create here. Where some
    /// rows are hidden from the caller (a private level, a read rule), a
    /// user may only create ids in their own namespace, `<user id>:…`, so
    /// whether some other id is taken (by a row the caller cannot see) is
    /// never revealed: other ids are refused whether taken or free. Where
    /// every row is visible to the caller, any id may be chosen.
    public func mayChoose(id: String) -> Bool {
        guard principal != .admin, hidesRows else { return true }
        guard let me = principal.userID else { return false }
        return id.hasPrefix(me + ":") && id.utf8.count > me.utf8.count + 1
    }

    /// The namespace rule of `mayChoose(id:)` as a sentence for errors.
    public var idNamespaceRule: String {
        guard let me = principal.userID else {
            return "Some documents here are hidden from you, so you cannot choose an _id; leave _id out to get a server-made one."
        }
        return "Where some documents are hidden from you (a private collection, a read rule) an _id you choose must start with your user id and ':' (\"\(me)\":…); leave _id out to get a server-made one."
    }

    /// The refusal of an operation by a rule: 401 for an anonymous caller
    /// (signing in may help), else 403. It names the rule, never the row.
    func refusal(_ operation: String) -> Denial {
        if principal == .anonymous { return .signInRequired }
        return .ruleDenied("The collection's \(operation) rule does not allow this.")
    }

    /// Which rows a caller may read or write, as data each engine renders to SQL.
    public enum RowRule: Sendable {
        case all
        case none
        /// Rows whose `_acl` names `user` as the creator, or one of
        /// `principals` (the user and their roles) in one of the lists `in`.
        case listed(user: String, principals: [String], in: [String])
        /// Rows a read rule's filter, resolved for this caller, matches.
        case matching(RuleFilter)
    }

    private static func readRule(_ principal: Principal, _ level: Level, roles: [String], rules: CollectionRules?) -> RowRule {
        if principal == .admin { return .all }
        if let read = rules?.read {
            let caller = RuleCaller(id: principal.userID, roles: roles)
            guard let rule = read.ruleFilter(for: caller) else { return .none }
            return rule.rowRule
        }
        switch (principal, level) {
        case (.admin, _), (_, .public), (.user, .shared), (.user, .readonly): return .all
        case (.anonymous, _): return .none
        case (.user(let id), .private):
            return .listed(user: id, principals: [id] + roles.map { "role:" + $0 }, in: ["creator", "read", "write"])
        }
    }

    /// Whether some rows exist that this caller cannot read, so that a
    /// client-chosen id must not reveal them (`mayChoose(id:)`).
    public var hidesRows: Bool {
        if case .all = readRule { return false }
        return true
    }

    /// Whether the rows this caller may change are decided in memory, by a
    /// configured `update` or `delete` rule (`checkUpdate`, `checkDelete`),
    /// rather than by `writeRule` in the engine's SQL.
    var writesByRule: Bool { rules?.update != nil || rules?.delete != nil }

    /// The rows this caller may change, as the engines' SQL checks them when
    /// a row is read for a write (403 for a visible row outside it). With an
    /// `update` or `delete` rule every visible row passes here and the rule
    /// decides, in memory, at the change itself.
    public var writeRule: RowRule {
        if principal != .admin && writesByRule { return .all }
        return Self.levelWriteRule(principal, level, roles: roles)
    }

    static func levelWriteRule(_ principal: Principal, _ level: Level, roles: [String]) -> RowRule {
        switch (principal, level) {
        case (.admin, _), (_, .public): return .all
        case (.anonymous, _), (.user, .readonly): return .none
        case (.user(let id), .shared), (.user(let id), .private):
            return .listed(user: id, principals: [id] + roles.map { "role:" + $0 }, in: ["creator", "write"])
        }
    }

    /// The caller's id as it appears, quoted, in the JSON text of any state
    /// whose `_acl` names them: a necessary condition for
    /// `readPredicate(state:)` that a substring search tests without parsing
    /// the JSON. nil when every row is visible, or when the id holds a
    /// character a JSON writer might escape.
    public var quotedReaderID: String? {
        guard case .listed(let user, let principals, _) = readRule, principals.count == 1,
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

    /// The in-memory twin of the engines' read SQL: may this caller read
    /// the stored document `document` (nil: no such state)? For tombstones,
    /// live events and silent pushes: no SQL.
    public func canRead(_ document: JSONObject?) -> Bool {
        guard let document else { return false }
        return Self.holds(readRule, on: document)
    }

    /// Whether `rule` admits the stored document `document`.
    static func holds(_ rule: RowRule, on document: JSONObject) -> Bool {
        switch rule {
        case .all: return true
        case .none: return false
        case .matching(let filter): return filter.matches(document)
        case .listed(let user, let principals, let lists):
            guard case .object(let acl)? = document["_acl"] else { return false }
            return lists.contains { list in
                if list == "creator" { return acl["creator"] == .string(user) }
                guard let names = acl[list]?.arrayValue else { return false }
                return names.contains { name in principals.contains { name == .string($0) } }
            }
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
                guard clearsCreator, creator == .null else { throw .invalid("_acl.creator is set by the server and cannot be changed.") }
                acl["creator"] = .null
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
