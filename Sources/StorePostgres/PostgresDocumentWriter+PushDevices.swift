import Store

/// Push devices on PostgreSQL: a token belongs to one user at a time, on
/// every node (the token is the primary key; `ON CONFLICT` hands it over).
extension PostgresDocumentWriter {
    /// Registers `token` for `userID`, taking it from whoever had it before.
    /// - Returns: true when the token was new or changed hands or platform.
    @discardableResult
    public func registerDevice(token: String, userID: String, platform: String) throws -> Bool {
        try PostgresAccountSQL.changed(db, """
            INSERT INTO _push_devices AS p (token, user_id, platform, created_at, updated_at) VALUES ($1::text, $2::text, $3::text, $4::text, $4::text)
            ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, platform = excluded.platform, updated_at = excluded.updated_at
            WHERE p.user_id IS DISTINCT FROM excluded.user_id OR p.platform IS DISTINCT FROM excluded.platform
            RETURNING 1
            """, [.text(token), .text(userID), .text(platform), .text(Timestamp.now())])
    }

    /// Removes `token` if it belongs to `userID` (any owner when nil).
    /// - Returns: false when there was no such token.
    public func unregisterDevice(token: String, userID: String?) throws -> Bool {
        if let userID {
            return try PostgresAccountSQL.changed(db, "DELETE FROM _push_devices WHERE token = $1::text AND user_id = $2::text RETURNING 1",
                                                  [.text(token), .text(userID)])
        }
        return try PostgresAccountSQL.changed(db, "DELETE FROM _push_devices WHERE token = $1::text RETURNING 1", [.text(token)])
    }

    /// The devices of `userIDs`, in the writer's transaction.
    public func devices(userIDs: [String]) throws -> [PushDevice] {
        try PostgresAccountSQL.devices(db, userIDs: userIDs)
    }

    /// Forgets every device of a deleted user.
    public func deleteDevices(userID: String) throws {
        try db.run("DELETE FROM _push_devices WHERE user_id = $1::text", [.text(userID)])
    }
}
