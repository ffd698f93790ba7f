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
