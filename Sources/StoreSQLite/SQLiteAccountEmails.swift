import Store

enum AccountCodeSQL {
    static let columns = "user_id, purpose, email, code_hash, link_hash, expires_at, attempts"

    static func code(_ row: SQLiteStatement) -> AccountCode {
        AccountCode(userID: row.text(0), purpose: row.text(1), email: row.text(2), codeHash: row.text(3), linkHash: row.text(4),
                    expiresAt: row.int(5), attempts: row.int(6))
    }
}

/// Emails, one-time codes and the mail outbox on SQLite (migration 12).
extension DocumentWriter {
    public func credentials(email: String) throws -> CredentialRecord? {
        try AccountSQL.credentials(db, email: email)
    }

    /// Sets (or removes, with nil) the account's email; 409 when another account has it.
    public func setEmail(userID: String, email: String?, verified: Bool) throws {
        if let email, let other = try AccountSQL.credentials(db, email: email), other.userID != userID { throw StoreError.emailTaken }
        try db.prepare("UPDATE _credentials SET email = ?2, email_verified = ?3, updated_at = ?4 WHERE user_id = ?1")
            .run([.text(userID), email.map { .text($0) } ?? .null, .int(verified ? 1 : 0), .text(Timestamp.now())])
    }

    /// Stores `code`, replacing the account's earlier one of the same purpose.
    public func saveAccountCode(_ code: AccountCode) throws {
        try db.prepare("INSERT OR REPLACE INTO _account_codes (\(AccountCodeSQL.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            .run([.text(code.userID), .text(code.purpose), .text(code.email), .text(code.codeHash), .text(code.linkHash),
                  .int(code.expiresAt), .int(code.attempts)])
        // Expired codes go on the way.
        try db.prepare("DELETE FROM _account_codes WHERE rowid IN (SELECT rowid FROM _account_codes WHERE expires_at <= ?1 LIMIT 20)")
            .run([.int(code.expiresAt - 7 * 24 * 3600)])
    }

    public func accountCode(userID: String, purpose: String) throws -> AccountCode? {
        try db.prepare("SELECT \(AccountCodeSQL.columns) FROM _account_codes WHERE user_id = ?1 AND purpose = ?2")
            .firstRow([.text(userID), .text(purpose)], AccountCodeSQL.code)
    }

    public func accountCode(linkHash: String) throws -> AccountCode? {
        try db.prepare("SELECT \(AccountCodeSQL.columns) FROM _account_codes WHERE link_hash = ?1")
            .firstRow([.text(linkHash)], AccountCodeSQL.code)
    }

    public func countCodeAttempt(userID: String, purpose: String) throws {
        try db.prepare("UPDATE _account_codes SET attempts = attempts + 1 WHERE user_id = ?1 AND purpose = ?2")
            .run([.text(userID), .text(purpose)])
    }

    /// Removes the code (used, or dead). Returns false when it was gone already.
    @discardableResult
    public func deleteAccountCode(userID: String, purpose: String, codeHash: String?) throws -> Bool {
        try db.prepare("DELETE FROM _account_codes WHERE user_id = ?1 AND purpose = ?2 AND (?3 IS NULL OR code_hash = ?3)")
            .run([.text(userID), .text(purpose), codeHash.map { .text($0) } ?? .null])
        return db.changes > 0
    }

    public func deleteAccountCodes(userID: String) throws {
        try db.prepare("DELETE FROM _account_codes WHERE user_id = ?1").run([.text(userID)])
    }

    public func identityOwner(provider: String, subject: String) throws -> String? {
        try db.prepare("SELECT user_id FROM _identities WHERE provider = ?1 AND subject = ?2")
            .firstRow([.text(provider), .text(subject)]) { $0.text(0) }
    }

    /// Links (provider, subject) to `userID`; false when it (or this provider for the account) is linked already.
    public func addIdentity(provider: String, subject: String, userID: String, email: String?, now: Int64) throws -> Bool {
        try db.prepare("INSERT OR IGNORE INTO _identities (provider, subject, user_id, email, created_at) VALUES (?1, ?2, ?3, ?4, ?5)")
            .run([.text(provider), .text(subject), .text(userID), email.map { .text($0) } ?? .null, .int(now)])
        return db.changes > 0
    }

    public func deleteIdentity(provider: String, userID: String) throws -> Bool {
        try db.prepare("DELETE FROM _identities WHERE provider = ?1 AND user_id = ?2").run([.text(provider), .text(userID)])
        return db.changes > 0
    }

    public func identities(userID: String) throws -> [IdentityRecord] {
        try db.prepare("SELECT provider, subject, email, created_at FROM _identities WHERE user_id = ?1 ORDER BY provider")
            .rows([.text(userID)]) { IdentityRecord(provider: $0.text(0), subject: $0.text(1), email: $0.isNull(2) ? nil : $0.text(2), createdAt: $0.int(3)) }
    }

    public func deleteIdentities(userID: String) throws {
        try db.prepare("DELETE FROM _identities WHERE user_id = ?1").run([.text(userID)])
    }

    /// Records an ID token as used until it expires; false when it was used before (a replay).
    public func useIDToken(hash: String, expiresAt: Int64, now: Int64) throws -> Bool {
        try db.prepare("DELETE FROM _idtokens_used WHERE rowid IN (SELECT rowid FROM _idtokens_used WHERE expires_at < ?1 LIMIT 20)")
            .run([.int(now - 3600)])
        try db.prepare("INSERT OR IGNORE INTO _idtokens_used (token_hash, expires_at) VALUES (?1, ?2)").run([.text(hash), .int(expiresAt)])
        return db.changes > 0
    }

    public func setAnonymous(userID: String, since: Int64?) throws {
        try db.prepare("UPDATE _credentials SET anonymous_since = ?2 WHERE user_id = ?1").run([.text(userID), since.map { .int($0) } ?? .null])
    }

    /// Gives a guest its credentials: 409 when the username or email is taken.
    public func upgradeCredentials(userID: String, username: String, email: String?, passwordHash: String) throws {
        if let email, let other = try AccountSQL.credentials(db, email: email), other.userID != userID { throw StoreError.emailTaken }
        do {
            try db.prepare("""
                UPDATE _credentials SET username = ?2, email = ?3, email_verified = 0, password_hash = ?4, anonymous_since = NULL, updated_at = ?5
                WHERE user_id = ?1
                """).run([.text(userID), .text(username), email.map { .text($0) } ?? .null, .text(passwordHash), .text(Timestamp.now())])
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.usernameTaken
        }
    }

    /// Guests made before `idleSince` with no session seen since then.
    public func staleAnonymousUsers(idleSince: Int64, limit: Int) throws -> [String] {
        try db.prepare("""
            SELECT c.user_id FROM _credentials c WHERE c.anonymous_since IS NOT NULL AND c.anonymous_since < ?1
            AND NOT EXISTS (SELECT 1 FROM _sessions s WHERE s.user_id = c.user_id AND s.last_seen >= ?1) LIMIT ?2
            """).rows([.int(idleSince), .int(Int64(limit))]) { $0.text(0) }
    }

    public func setTwoFactor(userID: String, secret: String?, enabled: Bool, recovery: [String]) throws {
        try db.prepare("UPDATE _credentials SET totp_secret = ?2, totp_enabled = ?3, totp_recovery = ?4 WHERE user_id = ?1")
            .run([.text(userID), secret.map { .text($0) } ?? .null, .int(enabled ? 1 : 0), .text(CredentialRecord.recoveryText(recovery))])
    }

    /// Records `step` as used; false when it (or a later one) was used already.
    public func useTwoFactorStep(userID: String, step: Int64) throws -> Bool {
        try db.prepare("UPDATE _credentials SET totp_last_step = ?2 WHERE user_id = ?1 AND totp_last_step < ?2").run([.text(userID), .int(step)])
        return db.changes > 0
    }

    /// Queues a message, sent after this transaction commits.
    public func enqueueMail(recipient: String, kind: String, message: String, nowMilliseconds: Int64) throws {
        try db.prepare("""
            INSERT INTO _mail_outbox (recipient, kind, message, status, attempts, next_attempt_at, created_at, updated_at)
            VALUES (?1, ?2, ?3, 'pending', 0, ?4, ?4, ?4)
            """).run([.text(recipient), .text(kind), .text(message), .int(nowMilliseconds)])
    }

    /// Due messages, each pushed `leaseMilliseconds` into the future so that
    /// no other sender takes it meanwhile (a crash sends it again after that).
    public func claimMail(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [MailJob] {
        let jobs = try db.prepare("""
            SELECT rid, recipient, kind, message, attempts FROM _mail_outbox WHERE status = 'pending' AND next_attempt_at <= ?1
            ORDER BY next_attempt_at, rid LIMIT ?2
            """).rows([.int(nowMilliseconds), .int(Int64(limit))]) {
            MailJob(rid: $0.int(0), recipient: $0.text(1), kind: $0.text(2), message: $0.text(3), attempts: Int($0.int(4)))
        }
        let lease = try db.prepare("UPDATE _mail_outbox SET next_attempt_at = ?2 WHERE rid = ?1")
        for job in jobs { try lease.run([.int(job.rid), .int(nowMilliseconds + leaseMilliseconds)]) }
        return jobs
    }

    public func recordMail(rid: Int64, attempt: Int, error: String?, outcome: MailOutcome) throws {
        let now = Outbox.nowMilliseconds()
        switch outcome {
        case .sent:
            try db.prepare("DELETE FROM _mail_outbox WHERE rid = ?1").run([.int(rid)])
        case .retry(let at):
            try db.prepare("UPDATE _mail_outbox SET attempts = ?2, next_attempt_at = ?3, last_error = ?4, updated_at = ?5 WHERE rid = ?1")
                .run([.int(rid), .int(Int64(attempt)), .int(at), error.map { .text($0) } ?? .null, .int(now)])
        case .dead:
            try db.prepare("UPDATE _mail_outbox SET status = 'dead', message = '', attempts = ?2, last_error = ?3, updated_at = ?4 WHERE rid = ?1")
                .run([.int(rid), .int(Int64(attempt)), error.map { .text($0) } ?? .null, .int(now)])
        }
    }

    /// Messages by status, for the admin API and tests: (pending, dead).
    public func mailCounts() throws -> (pending: Int, dead: Int) {
        try db.prepare("SELECT coalesce(sum(status = 'pending'), 0), coalesce(sum(status = 'dead'), 0) FROM _mail_outbox")
            .firstRow { (Int($0.int(0)), Int($0.int(1))) } ?? (0, 0)
    }
}

extension DocumentReader {
    public func identities(userID: String) throws -> [IdentityRecord] {
        try db.prepare("SELECT provider, subject, email, created_at FROM _identities WHERE user_id = ?1 ORDER BY provider")
            .rows([.text(userID)]) { IdentityRecord(provider: $0.text(0), subject: $0.text(1), email: $0.isNull(2) ? nil : $0.text(2), createdAt: $0.int(3)) }
    }

    public func credentials(email: String) throws -> CredentialRecord? {
        try AccountSQL.credentials(db, email: email)
    }
}
