import CSodium
import Foundation
import JSON
import Jobs
import Store

/// The push outbox on SQLite, the writer's side: enqueueing, device registration,
/// attempts and their verdicts, pruning and expiry.
extension DocumentWriter {
    /// Adds one push per device of `userID` in `audience` (in the caller's transaction).
    /// - Returns: how many pushes were enqueued.
    @discardableResult
    public func enqueuePush(userID: String, kind: String, payload: String, collapseID: String?, audience: PushAudience) throws -> Int {
        guard !audience.platforms.isEmpty else { return 0 }
        let now = Timestamp.now()
        let platforms = JSONValue.array(audience.platforms.map { .string($0) }).jsonText
        let coalesce = kind == "background" ? audience.coalesceSince : nil
        let before = try db.prepare("SELECT coalesce(max(rid), 0) FROM _push_deliveries").firstRow { $0.int(0) } ?? 0
        try db.prepare("""
            INSERT INTO _push_deliveries (token, user_id, platform, kind, payload, collapse_id, status, attempts, next_attempt_at, created_at, updated_at)
            SELECT token, user_id, platform, ?2, ?3, ?4, 'pending', 0, ?5, ?6, ?6 FROM _push_devices d
            WHERE user_id = ?1 AND platform IN (SELECT value FROM json_each(?7)) AND (?8 = 0 OR sync = 1) AND (?9 IS NULL OR token = ?9)
              AND (?10 IS NULL OR NOT EXISTS (SELECT 1 FROM _push_deliveries q WHERE q.token = d.token AND q.kind = 'background' AND q.created_at > ?10))
            ORDER BY created_at, token
            """).run([.text(userID), .text(kind), .text(payload), collapseID.map { .text($0) } ?? .null, .int(Outbox.nowMilliseconds()),
                      .text(now), .text(platforms), .int(audience.syncOnly ? 1 : 0), audience.token.map { .text($0) } ?? .null,
                      coalesce.map { .text($0) } ?? .null])
        let added = db.changes
        if coalesce != nil, added > 0 {
            try db.prepare("""
                UPDATE _push_deliveries SET status = 'dropped', last_error = 'superseded by a newer sync push', updated_at = ?2
                WHERE kind = 'background' AND status = 'pending' AND rid <= ?1
                  AND token IN (SELECT token FROM _push_deliveries WHERE rid > ?1 AND kind = 'background')
                """).run([.int(before), .text(now)])
        }
        return added
    }

    /// Registers `token` with its APNs environment and whether it wants silent sync pushes.
    /// Every registration renews the token's `seen_at` (stale tokens are dropped by it).
    @discardableResult
    public func registerDevice(token: String, userID: String, platform: String, environment: String?, sync: Bool) throws -> Bool {
        let changed = try registerDevice(token: token, userID: userID, platform: platform)
        try db.prepare("""
            UPDATE _push_devices SET seen_at = ?2, environment = ?3, sync = ?4 WHERE token = ?1
            """).run([.text(token), .text(Timestamp.now()), environment.map { .text($0) } ?? .null, .int(sync ? 1 : 0)])
        // At most `PushOutbox.devicesPerUser` devices a user: the least recently registered go.
        let extra = try db.prepare("""
            SELECT token FROM _push_devices WHERE user_id = ?1 ORDER BY coalesce(seen_at, updated_at) DESC, token DESC LIMIT -1 OFFSET ?2
            """).rows([.text(userID), .int(Int64(PushOutbox.devicesPerUser))]) { $0.text(0) }
        for old in extra where old != token { _ = try removeDevice(token: old, ifSeenBefore: nil) }
        return changed
    }

    /// Records a batch of attempts: each delivery's state, its attempt, the
    /// device's counts, and the removals they call for.
    /// - Returns: the tokens removed, with the reason.
    public func recordPushAttempts(_ records: [PushAttemptRecord]) throws -> [(token: String, reason: String)] {
        let now = Timestamp.now()
        let update = try db.prepare("""
            UPDATE _push_deliveries SET status = ?2, attempts = ?3, next_attempt_at = ?4, last_status = ?5, last_error = ?6, updated_at = ?7
            WHERE rid = ?1 AND status = 'pending'
            """)
        let attempt = try db.prepare("INSERT OR REPLACE INTO _push_attempts (delivery_rid, attempt, at, status, error) VALUES (?1, ?2, ?3, ?4, ?5)")
        let counts = try db.prepare("""
            UPDATE _push_devices SET deliveries = deliveries + ?2, failures = failures + ?3,
              last_error = CASE WHEN ?4 IS NULL THEN last_error ELSE ?4 END, last_push_at = ?5,
              environment = coalesce(?6, environment) WHERE token = ?1
            """)
        var removed: [(String, String)] = []
        var giveWay = GiveWay()  // a batch's records take milliseconds: the loops come first
        for r in records {
            giveWay.check()
            let (state, next) = PushOutbox.state(r.outcome)
            let status: SQLValue = r.status.map { .int(Int64($0)) } ?? .null
            let error: SQLValue = r.error.map { .text($0) } ?? .null
            try update.run([.int(r.rid), .text(state), .int(Int64(r.attempt)), .int(next), status, error, .text(now)])
            try attempt.run([.int(r.rid), .int(Int64(r.attempt)), .text(now), status, error])
            let ok = r.outcome == .delivered
            try counts.run([.text(r.token), .int(ok ? 1 : 0), .int(ok ? 0 : 1), ok ? .null : error, .text(now),
                            r.environment.map { .text($0) } ?? .null])
            if let removal = r.removal, try removeDevice(token: r.token, ifSeenBefore: removal.ifSeenBefore) {
                removed.append((r.token, removal.reason))
            }
        }
        return removed
    }

    /// Removes a device the provider disowned, and drops its pending pushes.
    /// - Parameter ifSeenBefore: only if the app last registered it before this time (ms).
    func removeDevice(token: String, ifSeenBefore: Int64?) throws -> Bool {
        if let before = ifSeenBefore {
            let seen = try db.prepare("SELECT coalesce(seen_at, updated_at) FROM _push_devices WHERE token = ?1").firstRow([.text(token)]) { $0.text(0) }
            guard let seen, PushOutbox.milliseconds(seen) < before else { return false }
        }
        try db.prepare("DELETE FROM _push_devices WHERE token = ?1").run([.text(token)])
        guard db.changes > 0 else { return false }
        try db.prepare("UPDATE _push_deliveries SET status = 'dropped', updated_at = ?2 WHERE token = ?1 AND status = 'pending'")
            .run([.text(token), .text(Timestamp.now())])
        return true
    }

    /// Forgets up to `limit` finished pushes (delivered, dead, dropped) and
    /// their attempts: alerts last changed before `alertsBefore`, silent
    /// pushes before `backgroundBefore` (each through `_push_deliveries_finished`).
    /// - Returns: how many were removed (the caller repeats in short jobs while it is `limit`).
    public func pruneFinishedPushes(alertsBefore: String, backgroundBefore: String, limit: Int) throws -> Int {
        let select = try db.prepare("""
            SELECT rid FROM _push_deliveries WHERE kind = ?1 AND status IN ('delivered', 'dead', 'dropped') AND updated_at < ?2 LIMIT ?3
            """)
        var rids = try select.rows([.text("background"), .text(backgroundBefore), .int(Int64(limit))]) { $0.int(0) }
        if rids.count < limit {
            rids += try select.rows([.text("alert"), .text(alertsBefore), .int(Int64(limit - rids.count))]) { $0.int(0) }
        }
        let attempts = try db.prepare("DELETE FROM _push_attempts WHERE delivery_rid = ?1")
        let row = try db.prepare("DELETE FROM _push_deliveries WHERE rid = ?1")
        for rid in rids {
            try attempts.run([.int(rid)])
            try row.run([.int(rid)])
        }
        return rids.count
    }

    /// Drops devices whose app has not registered them since `cutoff` (a timestamp).
    /// - Returns: the tokens removed.
    public func expireStaleDevices(seenBefore cutoff: String) throws -> [String] {
        let tokens = try db.prepare("SELECT token FROM _push_devices WHERE coalesce(seen_at, updated_at) < ?1 LIMIT 1000")
            .rows([.text(cutoff)]) { $0.text(0) }
        for token in tokens { _ = try removeDevice(token: token, ifSeenBefore: nil) }
        return tokens
    }
}
