import JSON
import Store

/// SQL for accounts and sessions, shared by the reader
/// and the writer connections. Times are Unix seconds.
enum AccountSQL {
    static func session(_ db: SQLiteConnection, tokenHash: String, now: Int64) throws -> SessionRecord? {
        try db.prepare("SELECT s.user_id, s.expires_at, s.last_seen, \(RoleSQL.sessionRoles) FROM _sessions s WHERE s.token_hash = ?1 AND s.expires_at > ?2")
            .firstRow([.text(tokenHash), .int(now)]) {
                SessionRecord(userID: $0.text(0), expiresAt: $0.int(1), lastSeen: $0.int(2), roles: Roles.list($0.isNull(3) ? nil : $0.text(3)))
            }
    }

    static let columns = "user_id, username, password_hash, email, email_verified, anonymous_since, totp_secret, totp_enabled, totp_last_step, totp_recovery"

    static func credential(_ row: SQLiteStatement) -> CredentialRecord {
        var c = CredentialRecord(userID: row.text(0), username: row.text(1), passwordHash: row.text(2),
                                 email: row.isNull(3) ? nil : row.text(3), emailVerified: row.int(4) != 0,
                                 anonymousSince: row.isNull(5) ? nil : row.int(5))
        c.totpSecret = row.isNull(6) ? nil : row.text(6)
        c.totpEnabled = row.int(7) != 0
        c.totpLastStep = row.int(8)
        c.totpRecovery = CredentialRecord.recoveryList(row.text(9))
        return c
    }

    static func credentials(_ db: SQLiteConnection, username: String) throws -> CredentialRecord? {
        try db.prepare("SELECT \(columns) FROM _credentials WHERE username = ?1").firstRow([.text(username)], credential)
    }

    static func credentials(_ db: SQLiteConnection, userID: String) throws -> CredentialRecord? {
        try db.prepare("SELECT \(columns) FROM _credentials WHERE user_id = ?1").firstRow([.text(userID)], credential)
    }

    static func credentials(_ db: SQLiteConnection, email: String) throws -> CredentialRecord? {
        try db.prepare("SELECT \(columns) FROM _credentials WHERE email = ?1").firstRow([.text(email)], credential)
    }
}

extension DocumentReader {
    public func session(tokenHash: String, now: Int64) throws -> SessionRecord? {
        try AccountSQL.session(db, tokenHash: tokenHash, now: now)
    }

    public func credentials(username: String) throws -> CredentialRecord? {
        try AccountSQL.credentials(db, username: username)
    }

    public func credentials(userID: String) throws -> CredentialRecord? {
        try AccountSQL.credentials(db, userID: userID)
    }
}

extension DocumentWriter {
    public func session(tokenHash: String, now: Int64) throws -> SessionRecord? {
        try AccountSQL.session(db, tokenHash: tokenHash, now: now)
    }

    /// Stores credentials for a new user; 409 when the username (or the email) is taken.
    public func addCredentials(userID: String, username: String, email: String?, passwordHash: String) throws {
        if let email, try AccountSQL.credentials(db, email: email) != nil { throw StoreError.emailTaken }
        do {
            try db.prepare("INSERT INTO _credentials (user_id, username, password_hash, updated_at, email) VALUES (?1, ?2, ?3, ?4, ?5)")
                .run([.text(userID), .text(username), .text(passwordHash), .text(Timestamp.now()), email.map { .text($0) } ?? .null])
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.usernameTaken
        }
    }

    public func addCredentials(userID: String, username: String, passwordHash: String) throws {
        try addCredentials(userID: userID, username: username, email: nil, passwordHash: passwordHash)
    }

    public func setPassword(userID: String, passwordHash: String) throws {
        try db.prepare("UPDATE _credentials SET password_hash = ?2, updated_at = ?3 WHERE user_id = ?1")
            .run([.text(userID), .text(passwordHash), .text(Timestamp.now())])
    }

    public func createSession(userID: String, tokenHash: String, now: Int64, lifetime: Int64) throws {
        try db.prepare("INSERT INTO _sessions (token_hash, user_id, created_at, last_seen, expires_at) VALUES (?1, ?2, ?3, ?3, ?4)")
            .run([.text(tokenHash), .text(userID), .int(now), .int(now + lifetime)])
        // Expired sessions go on the way, a few at a time.
        try db.prepare("DELETE FROM _sessions WHERE rowid IN (SELECT rowid FROM _sessions WHERE expires_at <= ?1 LIMIT 100)").run([.int(now)])
    }

    /// Sliding renewal: pushes the expiry out again.
    public func renewSession(tokenHash: String, now: Int64, lifetime: Int64) throws {
        try db.prepare("UPDATE _sessions SET last_seen = ?2, expires_at = ?3 WHERE token_hash = ?1 AND expires_at > ?2")
            .run([.text(tokenHash), .int(now), .int(now + lifetime)])
    }

    /// Revokes one session. Returns false if it did not exist.
    @discardableResult
    public func deleteSession(tokenHash: String) throws -> Bool {
        try db.prepare("DELETE FROM _sessions WHERE token_hash = ?1").run([.text(tokenHash)])
        return db.changes > 0
    }

    /// Revokes every session of `userID` except `keeping`.
    public func deleteSessions(userID: String, keeping: String?) throws {
        try db.prepare("DELETE FROM _sessions WHERE user_id = ?1 AND token_hash IS NOT ?2")
            .run([.text(userID), keeping.map { .text($0) } ?? .null])
    }

    /// Deletes an account's credentials, sessions and role memberships.
    public func deleteCredentials(userID: String) throws {
        try db.prepare("DELETE FROM _credentials WHERE user_id = ?1").run([.text(userID)])
        try deleteSessions(userID: userID, keeping: nil)
        try removeMemberships(userID: userID)
    }
}
