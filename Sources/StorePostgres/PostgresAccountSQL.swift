import JSON
import Store

/// SQL shared by the PostgreSQL reader and writer for accounts, push devices
/// and webhook endpoints (`AccountSQL`, `PushDeviceSQL`, `WebhookEndpointSQL`
/// on SQLite). Times are Unix seconds.
enum PostgresAccountSQL {
    /// A username as SQLite's `COLLATE NOCASE` compares it: ASCII letters folded.
    static let usernameMatches = "lower(username) = lower($1::text COLLATE \"C\")"

    static func session(_ db: PGConnection, tokenHash: String, now: Int64) throws -> SessionRecord? {
        try db.first("""
            SELECT s.user_id, s.expires_at, s.last_seen,
                   (SELECT string_agg(m.role, ',' ORDER BY m.role) FROM _role_members m WHERE m.user_id = s.user_id)
            FROM _sessions s WHERE s.token_hash = $1::text AND s.expires_at > $2::bigint
            """, [.text(tokenHash), .int(now)]) {
            SessionRecord(userID: $0.text(0) ?? "", expiresAt: $0.int(1) ?? 0, lastSeen: $0.int(2) ?? 0, roles: Roles.list($0.text(3)))
        }
    }

    static let credentialColumns = "user_id, username, password_hash, email, email_verified, anonymous_since, totp_secret, totp_enabled, totp_last_step, totp_recovery"

    static func credentials(_ db: PGConnection, username: String) throws -> CredentialRecord? {
        try db.first("SELECT \(credentialColumns) FROM _credentials WHERE \(usernameMatches)", [.text(username)], credential)
    }

    static func credentials(_ db: PGConnection, userID: String) throws -> CredentialRecord? {
        try db.first("SELECT \(credentialColumns) FROM _credentials WHERE user_id = $1::text", [.text(userID)], credential)
    }

    static func credentials(_ db: PGConnection, email: String) throws -> CredentialRecord? {
        try db.first("SELECT \(credentialColumns) FROM _credentials WHERE email = $1::text", [.text(email)], credential)
    }

    static func credential(_ row: PGRow) -> CredentialRecord {
        var c = CredentialRecord(userID: row.text(0) ?? "", username: row.text(1) ?? "", passwordHash: row.text(2) ?? "",
                                 email: row.text(3), emailVerified: (row.int(4) ?? 0) != 0, anonymousSince: row.int(5))
        c.totpSecret = row.text(6)
        c.totpEnabled = (row.int(7) ?? 0) != 0
        c.totpLastStep = row.int(8) ?? 0
        c.totpRecovery = CredentialRecord.recoveryList(row.text(9) ?? "[]")
        return c
    }

    static func devices(_ db: PGConnection, userIDs: [String]) throws -> [PushDevice] {
        var all: [PushDevice] = []
        for id in userIDs {
            all += try db.query("SELECT token, user_id, platform FROM _push_devices WHERE user_id = $1::text ORDER BY created_at, token",
                                [.text(id)]) { PushDevice(token: $0.text(0) ?? "", userID: $0.text(1) ?? "", platform: $0.text(2) ?? "") }
        }
        return all
    }

    static func webhookEndpoints(_ db: PGConnection) throws -> [WebhookEndpointRecord] {
        try db.query("SELECT name, url, secret, events, format, source, disabled_at, disabled_reason FROM _webhook_endpoints ORDER BY name") { row in
            let events = (try? JSONParser.parse(row.text(3) ?? "[]"))?.arrayValue?.compactMap(\.stringValue) ?? []
            return WebhookEndpointRecord(name: row.text(0) ?? "", url: row.text(1) ?? "", secret: row.text(2) ?? "", events: events,
                                         format: row.text(4) ?? "", source: row.text(5) ?? "",
                                         disabledAt: row.text(6), disabledReason: row.text(7))
        }
    }

    /// Runs `sql` and answers whether it touched a row (it must end in `RETURNING 1`).
    static func changed(_ db: PGConnection, _ sql: String, _ params: [SQLValue]) throws -> Bool {
        !(try db.query(sql, params) { _ in () }).isEmpty
    }

    /// How many rows a `DELETE … RETURNING 1` removed.
    static func deleted(_ db: PGConnection, _ sql: String, _ params: [SQLValue]) throws -> Int {
        try db.query(sql, params) { _ in () }.count
    }
}
