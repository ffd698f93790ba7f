import Store

/// SQL for push devices: a token belongs to one user at a time.
enum PushDeviceSQL {
    static func devices(_ db: SQLiteConnection, userIDs: [String]) throws -> [PushDevice] {
        var all: [PushDevice] = []
        let statement = try db.prepare("SELECT token, user_id, platform FROM _push_devices WHERE user_id = ?1 ORDER BY created_at, token")
        for id in userIDs {
            all += try statement.rows([.text(id)]) { PushDevice(token: $0.text(0), userID: $0.text(1), platform: $0.text(2)) }
        }
        return all
    }
}

extension DocumentWriter {
    /// Registers `token` for `userID`, taking it from whoever had it before.
    /// - Returns: true when the token was new or changed hands or platform.
    @discardableResult
    public func registerDevice(token: String, userID: String, platform: String) throws -> Bool {
        let now = Timestamp.now()
        try db.prepare("""
            INSERT INTO _push_devices (token, user_id, platform, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)
            ON CONFLICT(token) DO UPDATE SET user_id = ?2, platform = ?3, updated_at = ?4
            WHERE user_id IS NOT ?2 OR platform IS NOT ?3
            """).run([.text(token), .text(userID), .text(platform), .text(now)])
        return db.changes > 0
    }

    /// Removes `token` if it belongs to `userID` (any owner when nil).
    /// - Returns: false when there was no such token.
    public func unregisterDevice(token: String, userID: String?) throws -> Bool {
        if let userID {
            try db.prepare("DELETE FROM _push_devices WHERE token = ?1 AND user_id = ?2").run([.text(token), .text(userID)])
        } else {
            try db.prepare("DELETE FROM _push_devices WHERE token = ?1").run([.text(token)])
        }
        return db.changes > 0
    }

    /// The devices of `userIDs`, in the writer's transaction.
    public func devices(userIDs: [String]) throws -> [PushDevice] {
        try PushDeviceSQL.devices(db, userIDs: userIDs)
    }

    /// Forgets every device of a deleted user.
    public func deleteDevices(userID: String) throws {
        try db.prepare("DELETE FROM _push_devices WHERE user_id = ?1").run([.text(userID)])
    }
}

extension DocumentReader {
    public func devices(userIDs: [String]) throws -> [PushDevice] {
        try PushDeviceSQL.devices(db, userIDs: userIDs)
    }
}
