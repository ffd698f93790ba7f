import JSON

/// The caller an access rule is evaluated for: what its `@caller.*`
/// variables stand for (docs/RULES.md).
public struct RuleCaller: Sendable, Equatable {
    /// The signed-in user's id; nil for an anonymous caller.
    public let id: String?
    /// The user's role names (without the `role:` prefix).
    public let roles: [String]
    public let admin: Bool

    public init(id: String?, roles: [String] = [], admin: Bool = false) {
        self.id = id
        self.roles = roles
        self.admin = admin
    }

    public static let anonymous = RuleCaller(id: nil)

    /// What `@caller.id` stands for when nobody is signed in: a value no
    /// stored document holds (a member name starting with `$`, which Roost
    /// refuses in documents), so `{"owner": "@caller.id"}` never matches for
    /// an anonymous caller, where `null` would match every document without an owner.
    static let nobody: JSONValue = .array([.object(JSONObject([("$anonymous", .bool(true))]))])

    /// The names `_acl.read` and `_acl.write` may list for this caller: the
    /// user's id and `role:<name>` for each role (`@caller.principals`).
    public var principals: [String] {
        guard let id else { return [] }
        return [id] + roles.map { "role:" + $0 }
    }
}
