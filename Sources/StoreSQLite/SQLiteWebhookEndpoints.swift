import JSON
import Store

enum WebhookEndpointSQL {
    static func all(_ db: SQLiteConnection) throws -> [WebhookEndpointRecord] {
        try db.prepare("SELECT name, url, secret, events, format, source, disabled_at, disabled_reason FROM _webhook_endpoints ORDER BY name")
            .rows { row in
                let events = (try? JSONParser.parse(row.text(3)))?.arrayValue?.compactMap(\.stringValue) ?? []
                return WebhookEndpointRecord(name: row.text(0), url: row.text(1), secret: row.text(2), events: events,
                                             format: row.text(4), source: row.text(5),
                                             disabledAt: row.isNull(6) ? nil : row.text(6),
                                             disabledReason: row.isNull(7) ? nil : row.text(7))
            }
    }
}

extension DocumentWriter {
    public func webhookEndpoints() throws -> [WebhookEndpointRecord] { try WebhookEndpointSQL.all(db) }

    /// Adds or replaces an endpoint. Replacing keeps its disabled state only
    /// when `keepDisabled` (a config endpoint that a 410 disabled stays so across restarts).
    public func saveWebhookEndpoint(_ e: WebhookEndpointRecord, keepDisabled: Bool) throws {
        let events = JSONValue.array(e.events.map { .string($0) }).jsonText
        try db.prepare("""
            INSERT INTO _webhook_endpoints (name, url, secret, events, format, source, disabled_at, disabled_reason, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, NULL, ?7)
            ON CONFLICT(name) DO UPDATE SET url = ?2, secret = ?3, events = ?4, format = ?5, source = ?6,
              disabled_at = CASE WHEN ?8 THEN disabled_at ELSE NULL END,
              disabled_reason = CASE WHEN ?8 THEN disabled_reason ELSE NULL END
            """).run([.text(e.name), .text(e.url), .text(e.secret), .text(events), .text(e.format), .text(e.source),
                      .text(Timestamp.now()), .int(keepDisabled ? 1 : 0)])
    }

    /// Makes the stored config endpoints match the config file's list.
    public func syncConfigWebhookEndpoints(_ endpoints: [WebhookEndpointRecord]) throws {
        let names = Set(endpoints.map(\.name))
        for existing in try webhookEndpoints() where existing.source == "config" && !names.contains(existing.name) {
            _ = try deleteWebhookEndpoint(name: existing.name)
        }
        for e in endpoints {
            if let existing = try webhookEndpoints().first(where: { $0.name == e.name }), existing.source == "admin" {
                throw StoreError.conflict("webhook endpoint \"\(e.name)\" exists already from the admin API")
            }
            // The same URL and secret keep a 410's disabling; a changed endpoint starts enabled.
            let same = try webhookEndpoints().first { $0.name == e.name && $0.url == e.url && $0.secret == e.secret } != nil
            try saveWebhookEndpoint(e, keepDisabled: same)
        }
    }

    /// Removes an endpoint; its undelivered deliveries are marked dead.
    public func deleteWebhookEndpoint(name: String) throws -> Bool {
        try db.prepare("DELETE FROM _webhook_endpoints WHERE name = ?1").run([.text(name)])
        let removed = db.changes > 0
        try db.prepare("UPDATE _webhook_deliveries SET status = 'dead', last_error = 'endpoint removed', updated_at = ?2 WHERE endpoint = ?1 AND status = 'pending'")
            .run([.text(name), .text(Timestamp.now())])
        return removed
    }

    /// Disables (with a reason) or re-enables (reason nil) an endpoint.
    public func setWebhookEndpointDisabled(name: String, reason: String?) throws -> Bool {
        try db.prepare("UPDATE _webhook_endpoints SET disabled_at = ?2, disabled_reason = ?3 WHERE name = ?1")
            .run([.text(name), reason == nil ? .null : .text(Timestamp.now()), reason.map { .text($0) } ?? .null])
        return db.changes > 0
    }
}

extension DocumentReader {
    public func webhookEndpoints() throws -> [WebhookEndpointRecord] { try WebhookEndpointSQL.all(db) }
}
