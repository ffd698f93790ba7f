import JSON
import Store

/// The push outbox on PostgreSQL, as on SQLite (`Store/PushOutbox.swift`).
/// A node records only attempts on pushes it still holds (claimed by
/// `PostgresDocumentReader.duePushes`); each record gives the claim up.
extension PostgresDocumentWriter {
    @discardableResult
    public func enqueuePush(userID: String, kind: String, payload: String, collapseID: String?, audience: PushAudience) throws -> Int {
        guard !audience.platforms.isEmpty else { return 0 }
        let now = Timestamp.now()
        let coalesce = kind == "background" ? audience.coalesceSince : nil
        if coalesce != nil {
            // Nodes reading the same feed coalesce through this check: each device's lock, held to
            // COMMIT and taken in token order, makes the INSERT below (its own snapshot, READ
            // COMMITTED) see another node's sync push committed meanwhile, instead of adding a second.
            let _: [Void] = try db.query("""
                SELECT pg_advisory_xact_lock(hashtextextended('roost.push-sync:' || token, 0))
                FROM (SELECT token FROM _push_devices WHERE user_id = $1::text AND ($2::text IS NULL OR token = $2::text) ORDER BY token) t
                """, [.text(userID), audience.token.map { .text($0) } ?? .null]) { _ in () }
        }
        let added = try db.query("""
            INSERT INTO _push_deliveries (token, user_id, platform, kind, payload, collapse_id, status, attempts, next_attempt_at, created_at, updated_at)
            SELECT token, user_id, platform, $2::text, $3::text, $4::text, 'pending', 0, $5::bigint, $6::text, $6::text FROM _push_devices d
            WHERE user_id = $1::text AND platform = ANY(string_to_array($7::text, ',')) AND (NOT $8::boolean OR sync)
              AND ($9::text IS NULL OR token = $9::text)
              AND ($10::text IS NULL OR NOT EXISTS (SELECT 1 FROM _push_deliveries q
                                                    WHERE q.token = d.token AND q.kind = 'background' AND q.created_at > $10::text))
            ORDER BY created_at, token
            RETURNING rid, token
            """, [.text(userID), .text(kind), .text(payload), collapseID.map { .text($0) } ?? .null, .int(Outbox.nowMilliseconds()),
                  .text(now), .text(audience.platforms.joined(separator: ",")), .text(audience.syncOnly ? "true" : "false"),
                  audience.token.map { .text($0) } ?? .null, coalesce.map { .text($0) } ?? .null]) { ($0.int(0) ?? 0, $0.text(1) ?? "") }
        if coalesce != nil, let first = added.map(\.0).min() {
            // The new push supersedes the devices' older silent ones still waiting.
            try db.run("""
                UPDATE _push_deliveries SET status = 'dropped', last_error = 'superseded by a newer sync push', updated_at = $3::text
                WHERE kind = 'background' AND status = 'pending' AND rid < $1::bigint AND token = ANY(string_to_array($2::text, chr(1)))
                """, [.int(first), .text(added.map(\.1).joined(separator: "\u{1}")), .text(now)])
        }
        return added.count
    }

    @discardableResult
    public func registerDevice(token: String, userID: String, platform: String, environment: String?, sync: Bool) throws -> Bool {
        let changed = try registerDevice(token: token, userID: userID, platform: platform)
        try db.run("UPDATE _push_devices SET seen_at = $2::text, environment = $3::text, sync = $4::boolean WHERE token = $1::text",
                   [.text(token), .text(Timestamp.now()), environment.map { .text($0) } ?? .null, .text(sync ? "true" : "false")])
        let extra = try db.query("""
            SELECT token FROM _push_devices WHERE user_id = $1::text ORDER BY coalesce(seen_at, updated_at) DESC, token DESC OFFSET $2::bigint
            """, [.text(userID), .int(Int64(PushOutbox.devicesPerUser))]) { $0.text(0) ?? "" }
        for old in extra where old != token { _ = try removePushDevice(token: old, ifSeenBefore: nil) }
        return changed
    }

    public func recordPushAttempts(_ records: [PushAttemptRecord]) throws -> [(token: String, reason: String)] {
        let now = Timestamp.now()
        var removed: [(String, String)] = []
        for r in records {
            let (state, next) = Self.pushState(r.outcome)
            let status: SQLValue = r.status.map { .int(Int64($0)) } ?? .null
            let error: SQLValue = r.error.map { .text($0) } ?? .null
            let held: [Void] = try db.query("""
                WITH held AS (
                  UPDATE _push_deliveries SET
                    status = CASE WHEN status = 'pending' THEN $2::text ELSE status END,
                    attempts = CASE WHEN status = 'pending' THEN $3::integer ELSE attempts END,
                    next_attempt_at = CASE WHEN status = 'pending' THEN $4::bigint ELSE next_attempt_at END,
                    last_status = $5::integer, last_error = $6::text, updated_at = $7::text,
                    claimed_by = NULL, lease_until = NULL
                  WHERE rid = $1::bigint AND claimed_by = $8::text RETURNING rid)
                INSERT INTO _push_attempts (delivery_rid, attempt, at, status, error)
                SELECT rid, $3::integer, $7::text, $5::integer, $6::text FROM held
                ON CONFLICT (delivery_rid, attempt) DO UPDATE SET at = excluded.at, status = excluded.status, error = excluded.error
                RETURNING 1
                """, [.int(r.rid), .text(state), .int(Int64(r.attempt)), .int(next), status, error, .text(now), .text(nodeID)]) { _ in () }
            guard !held.isEmpty else {
                logger.info("ignored a push attempt: this node no longer holds the push", metadata: ["push": "\(r.rid)", "node": "\(nodeID)"])
                continue
            }
            let ok = r.outcome == .delivered
            try db.run("""
                UPDATE _push_devices SET deliveries = deliveries + $2::bigint, failures = failures + $3::bigint,
                  last_error = coalesce($4::text, last_error), last_push_at = $5::text, environment = coalesce($6::text, environment)
                WHERE token = $1::text
                """, [.text(r.token), .int(ok ? 1 : 0), .int(ok ? 0 : 1), ok ? .null : error, .text(now), r.environment.map { .text($0) } ?? .null])
            if let removal = r.removal, try removePushDevice(token: r.token, ifSeenBefore: removal.ifSeenBefore) {
                removed.append((r.token, removal.reason))
            }
        }
        return removed
    }

    static func pushState(_ outcome: PushAttemptRecord.Outcome) -> (String, Int64) {
        switch outcome {
        case .delivered: ("delivered", 0)
        case .retry(let at): ("pending", at)
        case .dead: ("dead", 0)
        case .dropped: ("dropped", 0)
        }
    }

    func removePushDevice(token: String, ifSeenBefore: Int64?) throws -> Bool {
        if let before = ifSeenBefore {
            let seen = try db.first("SELECT coalesce(seen_at, updated_at) FROM _push_devices WHERE token = $1::text", [.text(token)]) { $0.text(0) } ?? nil
            guard let seen, (Timestamp.milliseconds(seen) ?? 0) < before else { return false }
        }
        guard try PostgresAccountSQL.changed(db, "DELETE FROM _push_devices WHERE token = $1::text RETURNING 1", [.text(token)]) else { return false }
        try db.run("UPDATE _push_deliveries SET status = 'dropped', updated_at = $2::text WHERE token = $1::text AND status = 'pending'",
                   [.text(token), .text(Timestamp.now())])
        return true
    }

    public func pruneFinishedPushes(alertsBefore: String, backgroundBefore: String, limit: Int) throws -> Int {
        let rids = try db.query("""
            DELETE FROM _push_deliveries WHERE rid IN (
              (SELECT rid FROM _push_deliveries WHERE kind = 'background' AND status IN ('delivered', 'dead', 'dropped')
                 AND updated_at < $2::text LIMIT $3::bigint)
              UNION ALL
              (SELECT rid FROM _push_deliveries WHERE kind = 'alert' AND status IN ('delivered', 'dead', 'dropped')
                 AND updated_at < $1::text LIMIT $3::bigint))
            RETURNING rid
            """, [.text(alertsBefore), .text(backgroundBefore), .int(Int64(limit))]) { $0.int(0) ?? 0 }
        if !rids.isEmpty {
            try db.run("DELETE FROM _push_attempts WHERE delivery_rid = ANY(string_to_array($1::text, ',')::bigint[])",
                       [.text(rids.map(String.init).joined(separator: ","))])
        }
        return rids.count
    }

    public func expireStaleDevices(seenBefore cutoff: String) throws -> [String] {
        let tokens = try db.query("SELECT token FROM _push_devices WHERE coalesce(seen_at, updated_at) < $1::text LIMIT 1000", [.text(cutoff)]) {
            $0.text(0) ?? ""
        }
        for token in tokens { _ = try removePushDevice(token: token, ifSeenBefore: nil) }
        return tokens
    }
}

extension PostgresDocumentReader {
    /// Pending pushes due by `now` that no other node holds; each one returned is claimed for this node.
    public func duePushes(now: Int64, limit: Int) throws -> [DuePush] {
        try db.query("""
            WITH claimed AS (
              UPDATE _push_deliveries AS p SET claimed_by = $1::text, lease_until = clock_timestamp() + make_interval(secs => $2::numeric)
              WHERE p.rid IN (SELECT c.rid FROM _push_deliveries c
                              WHERE c.status = 'pending' AND c.next_attempt_at <= $3::bigint
                                AND (c.claimed_by IS NULL OR c.claimed_by = $1::text OR c.lease_until < clock_timestamp())
                              ORDER BY c.next_attempt_at, c.rid LIMIT $4::bigint FOR UPDATE OF c SKIP LOCKED)
              RETURNING p.*)
            SELECT p.rid, p.token, p.user_id, p.platform, p.kind, p.payload, p.collapse_id, p.attempts, p.created_at,
                   d.token IS NOT NULL, d.environment, coalesce(d.seen_at, d.updated_at)
            FROM claimed p LEFT JOIN _push_devices d ON d.token = p.token AND d.user_id = p.user_id
            ORDER BY p.next_attempt_at, p.rid
            """, [.text(nodeID), .double(claimLease), .int(now), .int(Int64(limit))]) { row in
            DuePush(rid: row.int(0) ?? 0, token: row.text(1) ?? "", userID: row.text(2) ?? "", platform: row.text(3) ?? "",
                    kind: row.text(4) ?? "", payload: row.text(5) ?? "{}", collapseID: row.text(6), attempts: Int(row.int(7) ?? 0),
                    createdAt: Timestamp.milliseconds(row.text(8) ?? "") ?? 0,
                    device: row.bool(9) == true ? PushDeviceState(environment: row.text(10), seenAt: Timestamp.milliseconds(row.text(11) ?? "") ?? 0) : nil)
        }
    }

    public func syncDevices(limit: Int) throws -> [PushDevice] {
        try db.query("SELECT token, user_id, platform FROM _push_devices WHERE sync ORDER BY user_id, token LIMIT $1::bigint", [.int(Int64(limit))]) {
            PushDevice(token: $0.text(0) ?? "", userID: $0.text(1) ?? "", platform: $0.text(2) ?? "")
        }
    }

    public func nextPushDue() throws -> Int64? {
        try db.first("SELECT min(next_attempt_at) FROM _push_deliveries WHERE status = 'pending'") { $0.int(0) } ?? nil
    }

    public func pushDeviceReports(limit: Int) throws -> [PushDeviceReport] {
        try db.query("""
            SELECT token, user_id, platform, environment, sync, deliveries, failures, last_error, last_push_at, coalesce(seen_at, updated_at)
            FROM _push_devices ORDER BY last_push_at DESC NULLS LAST, token LIMIT $1::bigint
            """, [.int(Int64(limit))]) { row in
            PushDeviceReport(device: PushDevice(token: row.text(0) ?? "", userID: row.text(1) ?? "", platform: row.text(2) ?? ""),
                             environment: row.text(3), sync: row.bool(4) == true, deliveries: row.int(5) ?? 0, failures: row.int(6) ?? 0,
                             lastError: row.text(7), lastPushAt: row.text(8), seenAt: row.text(9) ?? "")
        }
    }

    public func pushDelivery(rid: Int64) throws -> PushDeliveryRecord? {
        guard var push = try pushDeliveries(status: nil, limit: 1, rid: rid).first else { return nil }
        push.attemptLog = try db.query("SELECT attempt, at, status, error FROM _push_attempts WHERE delivery_rid = $1::bigint ORDER BY attempt",
                                                   [.int(rid)]) { row in
            PushDeliveryRecord.Attempt(attempt: row.int(0) ?? 0, at: row.text(1) ?? "", status: row.int(2), error: row.text(3))
        }
        return push
    }

    public func pushDeliveries(status: String?, limit: Int) throws -> [PushDeliveryRecord] {
        try pushDeliveries(status: status, limit: limit, rid: nil)
    }

    func pushDeliveries(status: String?, limit: Int, rid: Int64?) throws -> [PushDeliveryRecord] {
        try db.query("""
            SELECT rid, token, user_id, platform, kind, status, attempts, last_status, last_error, created_at, updated_at, collapse_id
            FROM _push_deliveries WHERE ($1::text IS NULL OR status = $1::text) AND ($3::bigint IS NULL OR rid = $3::bigint)
            ORDER BY rid DESC LIMIT $2::bigint
            """, [status.map { .text($0) } ?? .null, .int(Int64(limit)), rid.map { .int($0) } ?? .null]) { row in
            PushDeliveryRecord(rid: row.int(0) ?? 0, token: row.text(1) ?? "", userID: row.text(2) ?? "", platform: row.text(3) ?? "",
                                    kind: row.text(4) ?? "", status: row.text(5) ?? "", attempts: row.int(6) ?? 0, lastStatus: row.int(7),
                                    lastError: row.text(8), createdAt: row.text(9) ?? "", updatedAt: row.text(10) ?? "", collapseID: row.text(11))
        }
    }
}
