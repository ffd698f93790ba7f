import Store

/// Emails, one-time codes and the mail outbox on PostgreSQL, as
/// `DocumentWriter` keeps them (migration 8). The outbox is shared by every
/// node: a node claims due messages by pushing their due time past a lease
/// (`FOR UPDATE SKIP LOCKED`), so two nodes never send the same message at
/// once and a node that dies mid-send leaves it to another after the lease.
extension PostgresDocumentWriter {
    public func credentials(email: String) throws -> CredentialRecord? {
        try PostgresAccountSQL.credentials(db, email: email)
    }

    /// Stores credentials for a new user; 409 when the username or the email is taken.
    public func addCredentials(userID: String, username: String, email: String?, passwordHash: String) throws {
        let added = try PostgresAccountSQL.changed(db, """
            INSERT INTO _credentials (user_id, username, password_hash, updated_at, email) VALUES ($1::text, $2::text, $3::text, $4::text, $5::text)
            ON CONFLICT DO NOTHING RETURNING 1
            """, [.text(userID), .text(username), .text(passwordHash), .text(Timestamp.now()), email.map { .text($0) } ?? .null])
        guard added else {
            if let email, try PostgresAccountSQL.credentials(db, email: email) != nil { throw StoreError.emailTaken }
            throw StoreError.usernameTaken
        }
    }

    public func setEmail(userID: String, email: String?, verified: Bool) throws {
        if let email, let other = try PostgresAccountSQL.credentials(db, email: email), other.userID != userID { throw StoreError.emailTaken }
        try db.run("UPDATE _credentials SET email = $2::text, email_verified = $3::integer, updated_at = $4::text WHERE user_id = $1::text",
                   [.text(userID), email.map { .text($0) } ?? .null, .int(verified ? 1 : 0), .text(Timestamp.now())])
    }

    static let codeColumns = "user_id, purpose, email, code_hash, link_hash, expires_at, attempts"

    static func code(_ row: PGRow) -> AccountCode {
        AccountCode(userID: row.text(0) ?? "", purpose: row.text(1) ?? "", email: row.text(2) ?? "", codeHash: row.text(3) ?? "",
                    linkHash: row.text(4) ?? "", expiresAt: row.int(5) ?? 0, attempts: row.int(6) ?? 0)
    }

    public func saveAccountCode(_ code: AccountCode) throws {
        try db.run("""
            INSERT INTO _account_codes (\(Self.codeColumns)) VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::bigint)
            ON CONFLICT (user_id, purpose) DO UPDATE SET email = EXCLUDED.email, code_hash = EXCLUDED.code_hash,
                link_hash = EXCLUDED.link_hash, expires_at = EXCLUDED.expires_at, attempts = EXCLUDED.attempts
            """, [.text(code.userID), .text(code.purpose), .text(code.email), .text(code.codeHash), .text(code.linkHash),
                  .int(code.expiresAt), .int(code.attempts)])
        try db.run("""
            DELETE FROM _account_codes WHERE (user_id, purpose) IN (SELECT user_id, purpose FROM _account_codes
            WHERE expires_at <= $1::bigint LIMIT 20 FOR UPDATE SKIP LOCKED)
            """, [.int(code.expiresAt - 7 * 24 * 3600)])
    }

    public func accountCode(userID: String, purpose: String) throws -> AccountCode? {
        try db.first("SELECT \(Self.codeColumns) FROM _account_codes WHERE user_id = $1::text AND purpose = $2::text",
                     [.text(userID), .text(purpose)], Self.code)
    }

    public func accountCode(linkHash: String) throws -> AccountCode? {
        try db.first("SELECT \(Self.codeColumns) FROM _account_codes WHERE link_hash = $1::text", [.text(linkHash)], Self.code)
    }

    public func countCodeAttempt(userID: String, purpose: String) throws {
        try db.run("UPDATE _account_codes SET attempts = attempts + 1 WHERE user_id = $1::text AND purpose = $2::text",
                   [.text(userID), .text(purpose)])
    }

    @discardableResult
    public func deleteAccountCode(userID: String, purpose: String, codeHash: String?) throws -> Bool {
        try PostgresAccountSQL.changed(db, """
            DELETE FROM _account_codes WHERE user_id = $1::text AND purpose = $2::text AND ($3::text IS NULL OR code_hash = $3::text) RETURNING 1
            """, [.text(userID), .text(purpose), codeHash.map { .text($0) } ?? .null])
    }

    public func deleteAccountCodes(userID: String) throws {
        try db.run("DELETE FROM _account_codes WHERE user_id = $1::text", [.text(userID)])
    }

    public func identityOwner(provider: String, subject: String) throws -> String? {
        try db.first("SELECT user_id FROM _identities WHERE provider = $1::text AND subject = $2::text",
                     [.text(provider), .text(subject)]) { $0.text(0) } ?? nil
    }

    public func addIdentity(provider: String, subject: String, userID: String, email: String?, now: Int64) throws -> Bool {
        try PostgresAccountSQL.changed(db, """
            INSERT INTO _identities (provider, subject, user_id, email, created_at) VALUES ($1::text, $2::text, $3::text, $4::text, $5::bigint)
            ON CONFLICT DO NOTHING RETURNING 1
            """, [.text(provider), .text(subject), .text(userID), email.map { .text($0) } ?? .null, .int(now)])
    }

    public func deleteIdentity(provider: String, userID: String) throws -> Bool {
        try PostgresAccountSQL.changed(db, "DELETE FROM _identities WHERE provider = $1::text AND user_id = $2::text RETURNING 1",
                                       [.text(provider), .text(userID)])
    }

    public func identities(userID: String) throws -> [IdentityRecord] {
        try db.query("SELECT provider, subject, email, created_at FROM _identities WHERE user_id = $1::text ORDER BY provider",
                     [.text(userID)]) { IdentityRecord(provider: $0.text(0) ?? "", subject: $0.text(1) ?? "", email: $0.text(2), createdAt: $0.int(3) ?? 0) }
    }

    public func deleteIdentities(userID: String) throws {
        try db.run("DELETE FROM _identities WHERE user_id = $1::text", [.text(userID)])
    }

    public func useIDToken(hash: String, expiresAt: Int64, now: Int64) throws -> Bool {
        try db.run("""
            DELETE FROM _idtokens_used WHERE token_hash IN (SELECT token_hash FROM _idtokens_used WHERE expires_at < $1::bigint
            LIMIT 20 FOR UPDATE SKIP LOCKED)
            """, [.int(now - 3600)])
        return try PostgresAccountSQL.changed(db, """
            INSERT INTO _idtokens_used (token_hash, expires_at) VALUES ($1::text, $2::bigint) ON CONFLICT DO NOTHING RETURNING 1
            """, [.text(hash), .int(expiresAt)])
    }

    public func setAnonymous(userID: String, since: Int64?) throws {
        try db.run("UPDATE _credentials SET anonymous_since = $2::bigint WHERE user_id = $1::text", [.text(userID), since.map { .int($0) } ?? .null])
    }

    public func upgradeCredentials(userID: String, username: String, email: String?, passwordHash: String) throws {
        if let email, let other = try PostgresAccountSQL.credentials(db, email: email), other.userID != userID { throw StoreError.emailTaken }
        if let other = try PostgresAccountSQL.credentials(db, username: username), other.userID != userID { throw StoreError.usernameTaken }
        try db.run("""
            UPDATE _credentials SET username = $2::text, email = $3::text, email_verified = 0, password_hash = $4::text, anonymous_since = NULL,
            updated_at = $5::text WHERE user_id = $1::text
            """, [.text(userID), .text(username), email.map { .text($0) } ?? .null, .text(passwordHash), .text(Timestamp.now())])
    }

    public func staleAnonymousUsers(idleSince: Int64, limit: Int) throws -> [String] {
        try db.query("""
            SELECT c.user_id FROM _credentials c WHERE c.anonymous_since IS NOT NULL AND c.anonymous_since < $1::bigint
            AND NOT EXISTS (SELECT 1 FROM _sessions s WHERE s.user_id = c.user_id AND s.last_seen >= $1::bigint) LIMIT $2::bigint
            """, [.int(idleSince), .int(Int64(limit))]) { $0.text(0) ?? "" }
    }

    public func setTwoFactor(userID: String, secret: String?, enabled: Bool, recovery: [String]) throws {
        try db.run("""
            UPDATE _credentials SET totp_secret = $2::text, totp_enabled = $3::integer, totp_recovery = $4::text WHERE user_id = $1::text
            """, [.text(userID), secret.map { .text($0) } ?? .null, .int(enabled ? 1 : 0), .text(CredentialRecord.recoveryText(recovery))])
    }

    public func useTwoFactorStep(userID: String, step: Int64) throws -> Bool {
        try PostgresAccountSQL.changed(db, """
            UPDATE _credentials SET totp_last_step = $2::bigint WHERE user_id = $1::text AND totp_last_step < $2::bigint RETURNING 1
            """, [.text(userID), .int(step)])
    }

    public func enqueueMail(recipient: String, kind: String, message: String, nowMilliseconds: Int64) throws {
        try db.run("""
            INSERT INTO _mail_outbox (recipient, kind, message, status, attempts, next_attempt_at, created_at, updated_at)
            VALUES ($1::text, $2::text, $3::text, 'pending', 0, $4::bigint, $4::bigint, $4::bigint)
            """, [.text(recipient), .text(kind), .text(message), .int(nowMilliseconds)])
    }

    public func claimMail(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [MailJob] {
        try db.query("""
            UPDATE _mail_outbox SET next_attempt_at = $2::bigint WHERE rid IN (SELECT rid FROM _mail_outbox
            WHERE status = 'pending' AND next_attempt_at <= $1::bigint ORDER BY next_attempt_at, rid LIMIT $3::bigint FOR UPDATE SKIP LOCKED)
            RETURNING rid, recipient, kind, message, attempts
            """, [.int(nowMilliseconds), .int(nowMilliseconds + leaseMilliseconds), .int(Int64(limit))]) {
            MailJob(rid: $0.int(0) ?? 0, recipient: $0.text(1) ?? "", kind: $0.text(2) ?? "", message: $0.text(3) ?? "",
                    attempts: Int($0.int(4) ?? 0))
        }
    }

    public func recordMail(rid: Int64, attempt: Int, error: String?, outcome: MailOutcome) throws {
        let now = Outbox.nowMilliseconds()
        switch outcome {
        case .sent:
            try db.run("DELETE FROM _mail_outbox WHERE rid = $1::bigint", [.int(rid)])
        case .retry(let at):
            try db.run("""
                UPDATE _mail_outbox SET attempts = $2::integer, next_attempt_at = $3::bigint, last_error = $4::text, updated_at = $5::bigint
                WHERE rid = $1::bigint
                """, [.int(rid), .int(Int64(attempt)), .int(at), error.map { .text($0) } ?? .null, .int(now)])
        case .dead:
            try db.run("""
                UPDATE _mail_outbox SET status = 'dead', message = '', attempts = $2::integer, last_error = $3::text, updated_at = $4::bigint
                WHERE rid = $1::bigint
                """, [.int(rid), .int(Int64(attempt)), error.map { .text($0) } ?? .null, .int(now)])
        }
    }

    public func mailCounts() throws -> (pending: Int, dead: Int) {
        try db.first("SELECT count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'dead') FROM _mail_outbox") {
            (Int($0.int(0) ?? 0), Int($0.int(1) ?? 0))
        } ?? (0, 0)
    }
}
