import Foundation
import JSON
import Store

extension DocumentWriter {
    /// True when some enabled endpoint wants events of `type`; build costly event data only then.
    public func hasSubscribers(_ type: String) throws -> Bool {
        try db.prepare("""
            SELECT 1 FROM _webhook_endpoints WHERE disabled_at IS NULL
            AND EXISTS (SELECT 1 FROM json_each(events) WHERE value IN (?1, '*')) LIMIT 1
            """).firstRow([.text(type)]) { _ in true } ?? false
    }

    /// Records an event for every enabled endpoint subscribed to `type`.
    /// - Returns: the event id, or nil when no endpoint wants it (nothing written).
    @discardableResult
    public func enqueueEvent(type: String, data: String) throws -> String? {
        let endpoints = try db.prepare("""
            SELECT name FROM _webhook_endpoints WHERE disabled_at IS NULL
            AND EXISTS (SELECT 1 FROM json_each(events) WHERE value IN (?1, '*')) ORDER BY name
            """).rows([.text(type)]) { $0.text(0) }
        guard !endpoints.isEmpty else { return nil }
        let id = "evt_" + ids.next()
        let now = Timestamp.now()
        try db.prepare("INSERT INTO _outbox (id, type, created_at, data) VALUES (?1, ?2, ?3, ?4)")
            .run([.text(id), .text(type), .text(now), .text(data)])
        let insert = try db.prepare("""
            INSERT INTO _webhook_deliveries (event_id, endpoint, status, attempts, next_attempt_at, created_at, updated_at)
            VALUES (?1, ?2, 'pending', 0, ?3, ?4, ?4)
            """)
        for name in endpoints { try insert.run([.text(id), .text(name), .int(Outbox.nowMilliseconds()), .text(now)]) }
        return id
    }

    /// Records one attempt of delivery `rid` and what follows from it.
    public func recordAttempt(rid: Int64, attempt: Int, status: Int?, error: String?, durationMilliseconds: Int,
                              outcome: DeliveryOutcome) throws {
        let now = Timestamp.now()
        try db.prepare("INSERT OR REPLACE INTO _webhook_attempts (delivery_rid, attempt, at, status, error, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .run([.int(rid), .int(Int64(attempt)), .text(now), status.map { .int(Int64($0)) } ?? .null,
                  error.map { .text($0) } ?? .null, .int(Int64(durationMilliseconds))])
        let (state, next): (String, Int64) = switch outcome {
        case .delivered: ("delivered", 0)
        case .retry(let at): ("pending", at)
        case .dead: ("dead", 0)
        }
        // Only a pending row moves: a delivery re-queued or removed meanwhile keeps its state.
        try db.prepare("""
            UPDATE _webhook_deliveries SET status = ?2, attempts = ?3, next_attempt_at = ?4, last_status = ?5, last_error = ?6, updated_at = ?7
            WHERE rid = ?1 AND status = 'pending'
            """).run([.int(rid), .text(state), .int(Int64(attempt)), .int(next), status.map { .int(Int64($0)) } ?? .null,
                      error.map { .text($0) } ?? .null, .text(now)])
    }

    /// Puts a dead delivery back in the queue, due now, with its attempt count reset.
    /// - Returns: false when there is no dead delivery `rid`.
    public func requeueDelivery(rid: Int64) throws -> Bool {
        try db.prepare("UPDATE _webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?2, updated_at = ?3 WHERE rid = ?1 AND status = 'dead'")
            .run([.int(rid), .int(Outbox.nowMilliseconds()), .text(Timestamp.now())])
        return db.changes > 0
    }
}

extension DocumentReader {
    /// Pending deliveries due by `now` to enabled endpoints, oldest first.
    public func dueDeliveries(now: Int64, limit: Int) throws -> [DueDelivery] {
        let endpoints = Dictionary(uniqueKeysWithValues: try webhookEndpoints().map { ($0.name, $0) })
        return try db.prepare("""
            SELECT d.rid, d.event_id, o.type, o.created_at, o.data, d.attempts, d.endpoint
            FROM _webhook_deliveries d JOIN _outbox o ON o.id = d.event_id
            JOIN _webhook_endpoints e ON e.name = d.endpoint AND e.disabled_at IS NULL
            WHERE d.status = 'pending' AND d.next_attempt_at <= ?1
            ORDER BY d.next_attempt_at, d.rid LIMIT ?2
            """).rows([.int(now), .int(Int64(limit))]) { row in
            (row.int(0), row.text(1), row.text(2), row.text(3), row.text(4), Int(row.int(5)), row.text(6))
        }.compactMap { r in
            endpoints[r.6].map { DueDelivery(rid: r.0, eventID: r.1, type: r.2, createdAt: r.3, data: r.4, attempts: r.5, endpoint: $0) }
        }
    }

    /// When the next pending delivery to an enabled endpoint is due (ms), if any.
    public func nextDeliveryDue() throws -> Int64? {
        try db.prepare("""
            SELECT min(d.next_attempt_at) FROM _webhook_deliveries d
            JOIN _webhook_endpoints e ON e.name = d.endpoint AND e.disabled_at IS NULL WHERE d.status = 'pending'
            """).firstRow { $0.isNull(0) ? nil : $0.int(0) } ?? nil
    }

    /// Deliveries for the admin API, newest first, as JSON objects.
    public func deliveries(status: String?, limit: Int) throws -> [WebhookDeliveryRecord] {
        try db.prepare("""
            SELECT d.rid, d.event_id, o.type, d.endpoint, d.status, d.attempts, d.next_attempt_at, d.last_status, d.last_error,
                   d.created_at, d.updated_at
            FROM _webhook_deliveries d JOIN _outbox o ON o.id = d.event_id
            WHERE ?1 IS NULL OR d.status = ?1 ORDER BY d.rid DESC LIMIT ?2
            """).rows([status.map { .text($0) } ?? .null, .int(Int64(limit))], Self.deliveryObject)
    }

    /// One delivery with its attempts and event data, or nil.
    public func delivery(rid: Int64) throws -> WebhookDeliveryRecord? {
        guard var delivery = try db.prepare("""
            SELECT d.rid, d.event_id, o.type, d.endpoint, d.status, d.attempts, d.next_attempt_at, d.last_status, d.last_error,
                   d.created_at, d.updated_at, o.data
            FROM _webhook_deliveries d JOIN _outbox o ON o.id = d.event_id WHERE d.rid = ?1
            """).firstRow([.int(rid)], { row -> WebhookDeliveryRecord in
                var d = Self.deliveryObject(row)
                d.data = (try? JSONParser.parse(row.text(11))) ?? .null
                return d
            }) else { return nil }
        let attempts = try db.prepare("SELECT attempt, at, status, error, duration_ms FROM _webhook_attempts WHERE delivery_rid = ?1 ORDER BY attempt")
            .rows([.int(rid)]) { row in
                WebhookDeliveryRecord.Attempt(attempt: row.int(0), at: row.text(1), status: row.isNull(2) ? nil : row.int(2),
                                              error: row.isNull(3) ? nil : row.text(3), durationMilliseconds: row.int(4))
            }
        delivery.attemptLog = attempts
        return delivery
    }

    /// A delivery's row as its record.
    static func deliveryObject(_ row: SQLiteStatement) -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(rid: row.int(0), eventID: row.text(1), type: row.text(2), endpoint: row.text(3), status: row.text(4),
                              attempts: row.int(5), nextAttemptAt: row.int(6), lastStatus: row.isNull(7) ? nil : row.int(7),
                              lastError: row.isNull(8) ? nil : row.text(8), createdAt: row.text(9), updatedAt: row.text(10))
    }
}
