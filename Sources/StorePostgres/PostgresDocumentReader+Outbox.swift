import Foundation
import JSON
import Store

/// The webhook outbox read on PostgreSQL, where several nodes each run a
/// `WebhookDispatcher` on the same rows.
///
/// `dueDeliveries` claims what it returns, so each delivery is sent by one
/// node: it is the one read method that writes, which a reader connection
/// may do on PostgreSQL (it is an ordinary connection, in autocommit). A
/// claim is a lease of `claimLease` seconds in the database's clock,
/// renewed by every later poll of the same node while the delivery stays
/// due (the dispatcher polls at least once a second, and skips what it is
/// already sending); a node killed mid-delivery stops renewing, and another
/// node takes the delivery once the lease has passed. The writer's
/// `recordAttempt` then counts only the new holder's attempt.
extension PostgresDocumentReader {
    /// Pending deliveries due by `now` to enabled endpoints, oldest first,
    /// that no other node holds; each one returned is claimed for this node.
    public func dueDeliveries(now: Int64, limit: Int) throws -> [DueDelivery] {
        let endpoints = Dictionary(uniqueKeysWithValues: try webhookEndpoints().map { ($0.name, $0) })
        // SKIP LOCKED: nodes claiming at the same moment skip each other's rows instead of taking the same ones.
        let rows = try db.query("""
            WITH claimed AS (
              UPDATE _webhook_deliveries AS d SET claimed_by = $1::text,
                lease_until = clock_timestamp() + make_interval(secs => $2::numeric)
              WHERE d.rid IN (SELECT c.rid FROM _webhook_deliveries c
                              JOIN _webhook_endpoints e ON e.name = c.endpoint AND e.disabled_at IS NULL
                              WHERE c.status = 'pending' AND c.next_attempt_at <= $3::bigint
                                AND (c.claimed_by IS NULL OR c.claimed_by = $1::text OR c.lease_until < clock_timestamp())
                              ORDER BY c.next_attempt_at, c.rid LIMIT $4::bigint FOR UPDATE OF c SKIP LOCKED)
              RETURNING d.rid, d.event_id, d.attempts, d.endpoint, d.next_attempt_at)
            SELECT c.rid, c.event_id, o.type, o.created_at, o.data, c.attempts, c.endpoint
            FROM claimed c JOIN _outbox o ON o.id = c.event_id ORDER BY c.next_attempt_at, c.rid
            """, [.text(nodeID), .double(claimLease), .int(now), .int(Int64(limit))]) { row in
            (row.int(0) ?? 0, row.text(1) ?? "", row.text(2) ?? "", row.text(3) ?? "", row.text(4) ?? "", Int(row.int(5) ?? 0), row.text(6) ?? "")
        }
        return rows.compactMap { r in
            endpoints[r.6].map { DueDelivery(rid: r.0, eventID: r.1, type: r.2, createdAt: r.3, data: r.4, attempts: r.5, endpoint: $0) }
        }
    }

    /// Gives up this node's claims on deliveries still pending, so other
    /// nodes need not wait for the lease (PostgreSQL only: for a dispatcher
    /// that stopped, after its delivery threads finished).
    /// - Returns: how many claims were given up.
    @discardableResult
    public func releaseDeliveryClaims() throws -> Int {
        try db.query("""
            UPDATE _webhook_deliveries SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = $1::text AND status = 'pending' RETURNING 1
            """, [.text(nodeID)]) { _ in () }.count
    }

    /// When the next pending delivery to an enabled endpoint is due (ms), if any.
    public func nextDeliveryDue() throws -> Int64? {
        try db.first("""
            SELECT min(d.next_attempt_at) FROM _webhook_deliveries d
            JOIN _webhook_endpoints e ON e.name = d.endpoint AND e.disabled_at IS NULL WHERE d.status = 'pending'
            """) { $0.int(0) } ?? nil
    }

    /// Deliveries for the admin API, newest first.
    public func deliveries(status: String?, limit: Int) throws -> [WebhookDeliveryRecord] {
        try db.query("""
            SELECT \(Self.deliveryColumns) FROM _webhook_deliveries d JOIN _outbox o ON o.id = d.event_id
            WHERE $1::text IS NULL OR d.status = $1::text ORDER BY d.rid DESC LIMIT $2::bigint
            """, [status.map { .text($0) } ?? .null, .int(Int64(limit))], Self.deliveryObject)
    }

    /// One delivery with its attempts and event data, or nil.
    public func delivery(rid: Int64) throws -> WebhookDeliveryRecord? {
        guard var delivery = try db.first("""
            SELECT \(Self.deliveryColumns), o.data FROM _webhook_deliveries d JOIN _outbox o ON o.id = d.event_id WHERE d.rid = $1::bigint
            """, [.int(rid)], { row -> WebhookDeliveryRecord in
                var d = Self.deliveryObject(row)
                d.data = (try? JSONParser.parse(row.text(11) ?? "")) ?? .null
                return d
            }) else { return nil }
        let attempts = try db.query("SELECT attempt, at, status, error, duration_ms FROM _webhook_attempts WHERE delivery_rid = $1::bigint ORDER BY attempt",
                                    [.int(rid)]) { row in
            WebhookDeliveryRecord.Attempt(attempt: row.int(0) ?? 0, at: row.text(1) ?? "", status: row.int(2), error: row.text(3),
                                          durationMilliseconds: row.int(4) ?? 0)
        }
        delivery.attemptLog = attempts
        return delivery
    }

    static let deliveryColumns = """
        d.rid, d.event_id, o.type, d.endpoint, d.status, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, d.updated_at
        """

    /// A delivery's row as its record (as on SQLite).
    static func deliveryObject(_ row: PGRow) -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(rid: row.int(0) ?? 0, eventID: row.text(1) ?? "", type: row.text(2) ?? "", endpoint: row.text(3) ?? "",
                              status: row.text(4) ?? "", attempts: row.int(5) ?? 0, nextAttemptAt: row.int(6) ?? 0, lastStatus: row.int(7),
                              lastError: row.text(8), createdAt: row.text(9) ?? "", updatedAt: row.text(10) ?? "")
    }
}
