import JSON
import Store

/// Roles and their members on PostgreSQL (`RoleSQL` on SQLite), shared by
/// the reader and the writer. Nodes write concurrently: adding a member
/// takes a key-share lock on the role's and the user's rows, deleting a
/// role an update lock on it and deleting an account deletes its
/// credentials row first, so whichever commits second sees the first's rows.
enum PostgresRoleSQL {
    static func roles(_ db: PGConnection) throws -> [RoleSummary] {
        try db.query("""
            SELECT r.name, (SELECT count(*) FROM _role_members m WHERE m.role = r.name), r.created_at FROM _roles r ORDER BY r.name
            """) { RoleSummary(name: $0.text(0) ?? "", members: Int($0.int(1) ?? 0), createdAt: $0.text(2) ?? "") }
    }

    static func members(_ db: PGConnection, of name: RoleName, after: String?, limit: Int) throws -> [RoleMember]? {
        guard try db.first("SELECT 1 FROM _roles WHERE name = $1::text", [.text(name.text)], { _ in true }) != nil else { return nil }
        return try db.query("""
            SELECT m.user_id, c.username FROM _role_members m LEFT JOIN _credentials c ON c.user_id = m.user_id
            WHERE m.role = $1::text AND m.user_id > $2::text ORDER BY m.user_id LIMIT $3::bigint
            """, [.text(name.text), .text(after ?? ""), .int(Int64(limit))]) { RoleMember(userID: $0.text(0) ?? "", username: $0.text(1)) }
    }

    static func roles(_ db: PGConnection, userID: String) throws -> [String] {
        try db.query("SELECT role FROM _role_members WHERE user_id = $1::text ORDER BY role", [.text(userID)]) { $0.text(0) ?? "" }
    }
}

extension PostgresDocumentReader {
    public func roles() throws -> [RoleSummary] { try PostgresRoleSQL.roles(db) }

    public func members(of name: RoleName, after: String?, limit: Int) throws -> [RoleMember]? {
        try PostgresRoleSQL.members(db, of: name, after: after, limit: limit)
    }

    public func roles(userID: String) throws -> [String] { try PostgresRoleSQL.roles(db, userID: userID) }

    public func rolesByUser() throws -> [String: [String]] {
        let pairs = try db.query("SELECT user_id, role FROM _role_members ORDER BY user_id, role") { ($0.text(0) ?? "", $0.text(1) ?? "") }
        return Dictionary(grouping: pairs, by: \.0).mapValues { $0.map(\.1) }
    }
}

extension PostgresDocumentWriter {
    public func createRole(_ name: RoleName) throws -> Bool {
        try PostgresAccountSQL.changed(db, "INSERT INTO _roles (name, created_at) VALUES ($1::text, $2::text) ON CONFLICT (name) DO NOTHING RETURNING 1",
                                       [.text(name.text), .text(Timestamp.now())])
    }

    public func deleteRole(_ name: RoleName) throws -> Bool {
        guard try db.first("SELECT 1 FROM _roles WHERE name = $1::text FOR UPDATE", [.text(name.text)], { _ in true }) != nil else { return false }
        let members = try db.query("DELETE FROM _role_members WHERE role = $1::text RETURNING user_id", [.text(name.text)]) { $0.text(0) ?? "" }
        try db.run("DELETE FROM _roles WHERE name = $1::text", [.text(name.text)])
        for user in members.sorted() { recordMembershipChange(user) }
        return true
    }

    public func addMember(_ name: RoleName, userID: String) throws -> MembershipChange {
        guard try db.first("SELECT 1 FROM _roles WHERE name = $1::text FOR KEY SHARE", [.text(name.text)], { _ in true }) != nil else {
            return .noSuchRole
        }
        guard try db.first("SELECT 1 FROM _credentials WHERE user_id = $1::text FOR KEY SHARE", [.text(userID)], { _ in true }) != nil else {
            return .noSuchUser
        }
        guard try PostgresAccountSQL.changed(db, """
            INSERT INTO _role_members (role, user_id) VALUES ($1::text, $2::text) ON CONFLICT DO NOTHING RETURNING 1
            """, [.text(name.text), .text(userID)]) else { return .unchanged }
        recordMembershipChange(userID)
        return .added
    }

    public func removeMember(_ name: RoleName, userID: String) throws -> Bool {
        guard try PostgresAccountSQL.changed(db, "DELETE FROM _role_members WHERE role = $1::text AND user_id = $2::text RETURNING 1",
                                             [.text(name.text), .text(userID)]) else { return false }
        recordMembershipChange(userID)
        return true
    }

    public func removeMemberships(userID: String) throws {
        if try PostgresAccountSQL.deleted(db, "DELETE FROM _role_members WHERE user_id = $1::text RETURNING 1", [.text(userID)]) > 0 {
            recordMembershipChange(userID)
        }
    }

    public func unknownPrincipals(_ entries: [String]) throws -> [String] {
        let list = JSONValue.array(entries.map { .string($0) }).jsonText
        return try db.query("""
            SELECT e.value FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(value, n)
            WHERE NOT EXISTS (SELECT 1 FROM _credentials c WHERE c.user_id = e.value)
              AND NOT (left(e.value, 5) = 'role:' AND EXISTS (SELECT 1 FROM _roles r WHERE r.name = substr(e.value, 6)))
            ORDER BY e.n
            """, [.text(list)]) { $0.text(0) ?? "" }
    }

    /// The feed entry of a change to `userID`'s roles: no body (the roles are read with each session).
    private func recordMembershipChange(_ userID: String) {
        recordChange(Roles.feedCollection, id: userID, .update, previousText: nil)
    }
}
