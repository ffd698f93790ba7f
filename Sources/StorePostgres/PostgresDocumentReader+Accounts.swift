import Store

/// Accounts, sessions, push devices and webhook endpoints read on a reader
/// connection, as `DocumentReader` reads them.
extension PostgresDocumentReader {
    public func session(tokenHash: String, now: Int64) throws -> SessionRecord? {
        try PostgresAccountSQL.session(db, tokenHash: tokenHash, now: now)
    }

    public func credentials(username: String) throws -> CredentialRecord? {
        try PostgresAccountSQL.credentials(db, username: username)
    }

    public func credentials(userID: String) throws -> CredentialRecord? {
        try PostgresAccountSQL.credentials(db, userID: userID)
    }

    public func devices(userIDs: [String]) throws -> [PushDevice] {
        try PostgresAccountSQL.devices(db, userIDs: userIDs)
    }

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] { try PostgresAccountSQL.webhookEndpoints(db) }
}

extension PostgresDocumentReader {
    public func identities(userID: String) throws -> [IdentityRecord] {
        try db.query("SELECT provider, subject, email, created_at FROM _identities WHERE user_id = $1::text ORDER BY provider",
                     [.text(userID)]) { IdentityRecord(provider: $0.text(0) ?? "", subject: $0.text(1) ?? "", email: $0.text(2), createdAt: $0.int(3) ?? 0) }
    }

    public func credentials(email: String) throws -> CredentialRecord? {
        try PostgresAccountSQL.credentials(db, email: email)
    }
}
