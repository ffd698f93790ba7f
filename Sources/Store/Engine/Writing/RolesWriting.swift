/// Roles and their members (`docs/ROLES.md`). Every membership change
/// records a change-feed entry for `Roles.feedCollection` with the user's
/// id, in the same transaction, so every node's live hub learns of it.
public protocol RolesWriting: AnyObject {
    /// - Returns: false when a role of that name exists.
    func createRole(_ name: RoleName) throws -> Bool
    /// Deletes the role and its memberships. - Returns: false when there was no such role.
    func deleteRole(_ name: RoleName) throws -> Bool
    func addMember(_ name: RoleName, userID: String) throws -> MembershipChange
    /// - Returns: false when the user was not a member (or there is no such role).
    func removeMember(_ name: RoleName, userID: String) throws -> Bool
    /// Removes every membership of a user whose account is deleted.
    func removeMemberships(userID: String) throws
    /// The `entries` (of `_acl.read` / `_acl.write`) that name neither an
    /// existing user id nor `role:<name>` of an existing role, in order.
    func unknownPrincipals(_ entries: [String]) throws -> [String]
}
