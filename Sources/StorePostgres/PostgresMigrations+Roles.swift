/// Migration 15: roles and their members (SQLite's migration 18), shared by
/// every node. A membership row keeps its role by foreign key; writers lock
/// the role row (`PostgresRoles`) so a role deleted on one node while
/// another adds a member never leaves a member of no role.
extension PostgresMigrations {
    static let roles = (version: 15, sql: """
        CREATE TABLE _roles (
            name text COLLATE "C" PRIMARY KEY,
            created_at text NOT NULL
        );
        CREATE TABLE _role_members (
            role text COLLATE "C" NOT NULL REFERENCES _roles (name),
            user_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (role, user_id)
        );
        CREATE INDEX _role_members_user ON _role_members (user_id);
        """)
}
