import JSON
import Store

/// Webhook endpoints on PostgreSQL, as `DocumentWriter` keeps them. Every
/// node syncs its config file's endpoints at start; the sync runs under an
/// advisory lock so nodes starting together apply theirs one after another
/// instead of interleaving their deletes and saves.
extension PostgresDocumentWriter {
    /// The advisory-lock key of the config endpoints' sync.
    static let webhookSyncLockKey: Int64 = 0x526F_6F73_7413

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] { try PostgresAccountSQL.webhookEndpoints(db) }

    /// Adds or replaces an endpoint. Replacing keeps its disabled state only
    /// when `keepDisabled` (a config endpoint that a 410 disabled stays so across restarts).
    public func saveWebhookEndpoint(_ e: WebhookEndpointRecord, keepDisabled: Bool) throws {
        forgetSubscribers()
        let events = JSONValue.array(e.events.map { .string($0) }).jsonText
        try db.run("""
            INSERT INTO _webhook_endpoints AS w (name, url, secret, events, format, source, disabled_at, disabled_reason, created_at)
            VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, NULL, NULL, $7::text)
            ON CONFLICT (name) DO UPDATE SET url = excluded.url, secret = excluded.secret, events = excluded.events,
              format = excluded.format, source = excluded.source,
              disabled_at = CASE WHEN $8::boolean THEN w.disabled_at ELSE NULL END,
              disabled_reason = CASE WHEN $8::boolean THEN w.disabled_reason ELSE NULL END
            """, [.text(e.name), .text(e.url), .text(e.secret), .text(events), .text(e.format), .text(e.source),
                  .text(Timestamp.now()), .text(keepDisabled ? "true" : "false")])
    }

    /// Makes the stored config endpoints match the config file's list.
    public func syncConfigWebhookEndpoints(_ endpoints: [WebhookEndpointRecord]) throws {
        try db.run("SELECT pg_advisory_xact_lock($1::bigint)", [.int(Self.webhookSyncLockKey)])
        let names = Set(endpoints.map(\.name))
        for existing in try webhookEndpoints() where existing.source == "config" && !names.contains(existing.name) {
            _ = try deleteWebhookEndpoint(name: existing.name)
        }
        for e in endpoints {
            let stored = try webhookEndpoints().first { $0.name == e.name }
            if let stored, stored.source == "admin" {
                throw StoreError.conflict("webhook endpoint \"\(e.name)\" exists already from the admin API")
            }
            // The same URL and secret keep a 410's disabling; a changed endpoint starts enabled.
            let same = stored.map { $0.url == e.url && $0.secret == e.secret } ?? false
            try saveWebhookEndpoint(e, keepDisabled: same)
        }
    }

    /// Removes an endpoint; its undelivered deliveries are marked dead.
    public func deleteWebhookEndpoint(name: String) throws -> Bool {
        forgetSubscribers()
        let removed = try PostgresAccountSQL.changed(db, "DELETE FROM _webhook_endpoints WHERE name = $1::text RETURNING 1", [.text(name)])
        try db.run("""
            UPDATE _webhook_deliveries SET status = 'dead', last_error = 'endpoint removed', updated_at = $2::text
            WHERE endpoint = $1::text AND status = 'pending'
            """, [.text(name), .text(Timestamp.now())])
        return removed
    }

    /// Disables (with a reason) or re-enables (reason nil) an endpoint.
    public func setWebhookEndpointDisabled(name: String, reason: String?) throws -> Bool {
        forgetSubscribers()
        return try PostgresAccountSQL.changed(db, "UPDATE _webhook_endpoints SET disabled_at = $2::text, disabled_reason = $3::text WHERE name = $1::text RETURNING 1",
                                       [.text(name), reason == nil ? .null : .text(Timestamp.now()), reason.map { .text($0) } ?? .null])
    }

    /// The batch's `hasSubscribers` answers no longer hold once endpoints change.
    func forgetSubscribers() {
        if subscribers != nil { subscribers = [:] }
    }
}
