import JSON
import Store

/// Roles and their members on SQLite, shared by the reader and the writer.
enum RoleSQL {
    static let migration = """
        CREATE TABLE _roles (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL
        );
        CREATE TABLE _role_members (
            role TEXT NOT NULL REFERENCES _roles(name),
            user_id TEXT NOT NULL,
            PRIMARY KEY (role, user_id)
        );
        CREATE INDEX _role_members_user ON _role_members(user_id);
        """

    /// A session's roles, comma-separated (`Roles.list`), in the session's own query.
    static let sessionRoles = "(SELECT group_concat(role, ',') FROM (SELECT role FROM _role_members WHERE user_id = s.user_id ORDER BY role))"

    static func roles(_ db: SQLiteConnection) throws -> [RoleSummary] {
        try db.prepare("""
            SELECT r.name, (SELECT count(*) FROM _role_members m WHERE m.role = r.name), r.created_at FROM _roles r ORDER BY r.name
            """).rows { RoleSummary(name: $0.text(0), members: Int($0.int(1)), createdAt: $0.text(2)) }
    }

    static func exists(_ db: SQLiteConnection, _ name: RoleName) throws -> Bool {
        try db.prepare("SELECT 1 FROM _roles WHERE name = ?1").firstRow([.text(name.text)]) { _ in true } ?? false
    }

    static func members(_ db: SQLiteConnection, of name: RoleName, after: String?, limit: Int) throws -> [RoleMember]? {
        guard try exists(db, name) else { return nil }
        return try db.prepare("""
            SELECT m.user_id, c.username FROM _role_members m LEFT JOIN _credentials c ON c.user_id = m.user_id
            WHERE m.role = ?1 AND m.user_id > ?2 ORDER BY m.user_id LIMIT ?3
            """).rows([.text(name.text), .text(after ?? ""), .int(Int64(limit))]) {
            RoleMember(userID: $0.text(0), username: $0.isNull(1) ? nil : $0.text(1))
        }
    }

    static func roles(_ db: SQLiteConnection, userID: String) throws -> [String] {
        try db.prepare("SELECT role FROM _role_members WHERE user_id = ?1 ORDER BY role").rows([.text(userID)]) { $0.text(0) }
    }
}

extension DocumentReader {
    public func roles() throws -> [RoleSummary] { try db.readTransaction { try RoleSQL.roles(db) } }

    public func members(of name: RoleName, after: String?, limit: Int) throws -> [RoleMember]? {
        try db.readTransaction { try RoleSQL.members(db, of: name, after: after, limit: limit) }
    }

    public func roles(userID: String) throws -> [String] { try RoleSQL.roles(db, userID: userID) }

    public func rolesByUser() throws -> [String: [String]] {
        let pairs = try db.prepare("SELECT user_id, role FROM _role_members ORDER BY user_id, role").rows { ($0.text(0), $0.text(1)) }
        return Dictionary(grouping: pairs, by: \.0).mapValues { $0.map(\.1) }
    }
}

extension DocumentWriter {
    public func createRole(_ name: RoleName) throws -> Bool {
        try db.prepare("INSERT INTO _roles (name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO NOTHING")
            .run([.text(name.text), .text(Timestamp.now())])
        return db.changes > 0
    }

    public func deleteRole(_ name: RoleName) throws -> Bool {
        guard try RoleSQL.exists(db, name) else { return false }
        let members = try db.prepare("SELECT user_id FROM _role_members WHERE role = ?1 ORDER BY user_id").rows([.text(name.text)]) { $0.text(0) }
        try db.prepare("DELETE FROM _role_members WHERE role = ?1").run([.text(name.text)])
        try db.prepare("DELETE FROM _roles WHERE name = ?1").run([.text(name.text)])
        for user in members { try recordMembershipChange(user) }
        return true
    }

    public func addMember(_ name: RoleName, userID: String) throws -> MembershipChange {
        guard try RoleSQL.exists(db, name) else { return .noSuchRole }
        guard try AccountSQL.credentials(db, userID: userID) != nil else { return .noSuchUser }
        try db.prepare("INSERT INTO _role_members (role, user_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
            .run([.text(name.text), .text(userID)])
        guard db.changes > 0 else { return .unchanged }
        try recordMembershipChange(userID)
        return .added
    }

    public func removeMember(_ name: RoleName, userID: String) throws -> Bool {
        try db.prepare("DELETE FROM _role_members WHERE role = ?1 AND user_id = ?2").run([.text(name.text), .text(userID)])
        guard db.changes > 0 else { return false }
        try recordMembershipChange(userID)
        return true
    }

    public func removeMemberships(userID: String) throws {
        try db.prepare("DELETE FROM _role_members WHERE user_id = ?1").run([.text(userID)])
        if db.changes > 0 { try recordMembershipChange(userID) }
    }

    public func unknownPrincipals(_ entries: [String]) throws -> [String] {
        let list = JSONValue.array(entries.map { .string($0) }).jsonText
        return try db.prepare("""
            SELECT e.value FROM json_each(?1) AS e
            WHERE NOT EXISTS (SELECT 1 FROM _credentials c WHERE c.user_id = e.value)
              AND NOT (substr(e.value, 1, 5) = 'role:' AND EXISTS (SELECT 1 FROM _roles r WHERE r.name = substr(e.value, 6)))
            ORDER BY e.key
            """).rows([.text(list)]) { $0.text(0) }
    }

    /// The feed entry of a change to `userID`'s roles: no body (the roles are read with each session).
    private func recordMembershipChange(_ userID: String) throws {
        try recordChange(Roles.feedCollection, id: userID, .update, previousText: nil)
    }
}
