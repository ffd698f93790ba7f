import Store

/// The durable webhook outbox on PostgreSQL: events are written in the same
/// transaction as the write that caused them, one delivery row per
/// subscribed endpoint, as on SQLite (`Outbox.swift`).
///
/// Across nodes a delivery is sent by the node that claimed it
/// (`PostgresDocumentReader.dueDeliveries`); `recordAttempt` counts an
/// attempt only from the node that still holds the claim, so a node whose
/// lease passed and went to another node cannot count the delivery twice.
extension PostgresDocumentWriter {
    /// Endpoints that are enabled and want events of type `$1`.
    static let subscribedEndpoints = """
        SELECT name FROM _webhook_endpoints WHERE disabled_at IS NULL
        AND EXISTS (SELECT 1 FROM json_array_elements_text(events::json) AS e(value) WHERE e.value IN ($1::text, '*'))
        """

    /// True when some enabled endpoint wants events of `type`; build costly
    /// event data only then. Inside `commitBatch` the answer is kept for the
    /// rest of the batch (forgotten when an operation changes endpoints or fails).
    public func hasSubscribers(_ type: String) throws -> Bool {
        if let known = subscribers?[type] { return known }
        let found = try db.first(Self.subscribedEndpoints + " LIMIT 1", [.text(type)]) { _ in true } ?? false
        if subscribers != nil { subscribers?[type] = found }
        return found
    }

    /// Records an event for every enabled endpoint subscribed to `type`, in one statement.
    /// - Returns: the event id, or nil when no endpoint wants it (nothing written).
    @discardableResult
    public func enqueueEvent(type: String, data: String) throws -> String? {
        let id = "evt_" + ids.next()
        let now = Timestamp.now()
        let added = try db.query("""
            WITH e AS (\(Self.subscribedEndpoints)),
            o AS (INSERT INTO _outbox (id, type, created_at, data) SELECT $2::text, $1::text, $3::text, $4::text
                  WHERE EXISTS (SELECT 1 FROM e) RETURNING id)
            INSERT INTO _webhook_deliveries (event_id, endpoint, status, attempts, next_attempt_at, created_at, updated_at)
            SELECT o.id, e.name, 'pending', 0, $5::bigint, $3::text, $3::text FROM o, e ORDER BY e.name
            RETURNING 1
            """, [.text(type), .text(id), .text(now), .text(data), .int(Outbox.nowMilliseconds())]) { _ in () }
        return added.isEmpty ? nil : id
    }

    /// Records one attempt of delivery `rid` and what follows from it, and
    /// gives up this node's claim. Ignored entirely (no attempt logged,
    /// nothing counted) when this node (`nodeID`) no longer holds the claim.
    /// A delivery no longer pending (re-queued or its endpoint removed
    /// meanwhile) logs the attempt but keeps its state, as on SQLite.
    public func recordAttempt(rid: Int64, attempt: Int, status: Int?, error: String?, durationMilliseconds: Int,
                              outcome: DeliveryOutcome) throws {
        let (state, next): (String, Int64) = switch outcome {
        case .delivered: ("delivered", 0)
        case .retry(let at): ("pending", at)
        case .dead: ("dead", 0)
        }
        let counted = try db.query("""
            WITH held AS (
              UPDATE _webhook_deliveries SET
                status = CASE WHEN status = 'pending' THEN $2::text ELSE status END,
                attempts = CASE WHEN status = 'pending' THEN $3::integer ELSE attempts END,
                next_attempt_at = CASE WHEN status = 'pending' THEN $4::bigint ELSE next_attempt_at END,
                last_status = CASE WHEN status = 'pending' THEN $5::integer ELSE last_status END,
                last_error = CASE WHEN status = 'pending' THEN $6::text ELSE last_error END,
                updated_at = CASE WHEN status = 'pending' THEN $7::text ELSE updated_at END,
                claimed_by = NULL, lease_until = NULL
              WHERE rid = $1::bigint AND claimed_by = $8::text RETURNING rid)
            INSERT INTO _webhook_attempts (delivery_rid, attempt, at, status, error, duration_ms)
            SELECT rid, $3::integer, $7::text, $5::integer, $6::text, $9::bigint FROM held
            ON CONFLICT (delivery_rid, attempt) DO UPDATE SET at = excluded.at, status = excluded.status,
              error = excluded.error, duration_ms = excluded.duration_ms
            RETURNING 1
            """, [.int(rid), .text(state), .int(Int64(attempt)), .int(next), status.map { .int(Int64($0)) } ?? .null,
                  error.map { .text($0) } ?? .null, .text(Timestamp.now()), .text(nodeID), .int(Int64(durationMilliseconds))]) { _ in () }
        if counted.isEmpty {
            logger.info("ignored a webhook attempt: this node no longer holds the delivery",
                        metadata: ["delivery": "\(rid)", "node": "\(nodeID)"])
        }
    }

    /// Puts a dead delivery back in the queue, due now, with its attempt count reset and no claim.
    /// - Returns: false when there is no dead delivery `rid`.
    public func requeueDelivery(rid: Int64) throws -> Bool {
        try PostgresAccountSQL.changed(db, """
            UPDATE _webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2::bigint, updated_at = $3::text,
              claimed_by = NULL, lease_until = NULL
            WHERE rid = $1::bigint AND status = 'dead' RETURNING 1
            """, [.int(rid), .int(Outbox.nowMilliseconds()), .text(Timestamp.now())])
    }
}
