import Store

/// Credentials and sessions on PostgreSQL, as `DocumentWriter` keeps them.
/// Shared by every node: a session made on one node signs in on all, and a
/// deleted one (log-out, revocation) is gone for all at its commit. A taken
/// username is decided by the unique index, whichever node took it.
extension PostgresDocumentWriter {
    public func session(tokenHash: String, now: Int64) throws -> SessionRecord? {
        try PostgresAccountSQL.session(db, tokenHash: tokenHash, now: now)
    }

    /// Stores credentials for a new user; 409 when the username (or user id) is taken.
    /// ON CONFLICT keeps the batch's transaction alive: a taken name is an answer, not an abort.
    public func addCredentials(userID: String, username: String, passwordHash: String) throws {
        try addCredentials(userID: userID, username: username, email: nil, passwordHash: passwordHash)
    }

    public func setPassword(userID: String, passwordHash: String) throws {
        try db.run("UPDATE _credentials SET password_hash = $2::text, updated_at = $3::text WHERE user_id = $1::text",
                   [.text(userID), .text(passwordHash), .text(Timestamp.now())])
    }

    public func createSession(userID: String, tokenHash: String, now: Int64, lifetime: Int64) throws {
        try db.run("""
            INSERT INTO _sessions (token_hash, user_id, created_at, last_seen, expires_at)
            VALUES ($1::text, $2::text, $3::bigint, $3::bigint, $4::bigint)
            """, [.text(tokenHash), .text(userID), .int(now), .int(now + lifetime)])
        // Expired sessions go on the way, a few at a time; rows another node is removing are skipped, not waited for.
        try db.run("""
            DELETE FROM _sessions WHERE token_hash IN (SELECT token_hash FROM _sessions WHERE expires_at <= $1::bigint
            LIMIT 100 FOR UPDATE SKIP LOCKED)
            """, [.int(now)])
    }

    /// Sliding renewal: pushes the expiry out again.
    public func renewSession(tokenHash: String, now: Int64, lifetime: Int64) throws {
        try db.run("UPDATE _sessions SET last_seen = $2::bigint, expires_at = $3::bigint WHERE token_hash = $1::text AND expires_at > $2::bigint",
                   [.text(tokenHash), .int(now), .int(now + lifetime)])
    }

    /// Revokes one session. Returns false if it did not exist.
    @discardableResult
    public func deleteSession(tokenHash: String) throws -> Bool {
        try PostgresAccountSQL.changed(db, "DELETE FROM _sessions WHERE token_hash = $1::text RETURNING 1", [.text(tokenHash)])
    }

    /// Revokes every session of `userID` except `keeping`.
    public func deleteSessions(userID: String, keeping: String?) throws {
        try db.run("DELETE FROM _sessions WHERE user_id = $1::text AND token_hash IS DISTINCT FROM $2::text",
                   [.text(userID), keeping.map { .text($0) } ?? .null])
    }

    /// Deletes an account's credentials, sessions and role memberships.
    public func deleteCredentials(userID: String) throws {
        try db.run("DELETE FROM _credentials WHERE user_id = $1::text", [.text(userID)])
        try deleteSessions(userID: userID, keeping: nil)
        try removeMemberships(userID: userID)
    }

    /// Revokes `userID`'s sessions: the one whose hash starts with `id`, or
    /// all of them when `id` is nil. Returns how many ended.
    public func revokeSessions(userID: String, id: String?) throws -> Int {
        if let id {
            guard id.count == 16, id.allSatisfy(\.isHexDigit) else { return 0 }
            return try PostgresAccountSQL.deleted(db, "DELETE FROM _sessions WHERE user_id = $1::text AND left(token_hash, 16) = $2::text RETURNING 1",
                                                  [.text(userID), .text(id)])
        }
        return try PostgresAccountSQL.deleted(db, "DELETE FROM _sessions WHERE user_id = $1::text RETURNING 1", [.text(userID)])
    }
}
