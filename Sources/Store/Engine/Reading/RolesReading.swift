/// Roles and their members as the admin API and `GET /users/me` read them.
public protocol RolesReading: AnyObject {
    /// Every role by name, with its member count.
    func roles() throws -> [RoleSummary]
    /// The members of `name` after the user id `after`, by user id; nil when there is no such role.
    func members(of name: RoleName, after: String?, limit: Int) throws -> [RoleMember]?
    /// The roles of a user, sorted.
    func roles(userID: String) throws -> [String]
    /// Every user's roles, sorted, in one read (silent sync pushes judge all device users at once).
    func rolesByUser() throws -> [String: [String]]
}
