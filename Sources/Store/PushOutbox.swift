import CSodium
import Foundation
import JSON

/// A push waiting in the outbox for one device, as the push dispatcher reads it.
public struct DuePush: Sendable {
    public let rid: Int64
    public let token: String
    public let userID: String
    public let platform: String
    /// `alert` (a visible notification) or `background` (a silent sync push).
    public let kind: String
    /// The provider-neutral notification, as JSON text (`PushNotification`).
    public let payload: String
    public let collapseID: String?
    public let attempts: Int
    /// When the push was enqueued (milliseconds since 1970).
    public let createdAt: Int64
    /// The device as it is now; nil when it was removed meanwhile (the push is dropped).
    public let device: PushDeviceState?

    public init(rid: Int64, token: String, userID: String, platform: String, kind: String, payload: String, collapseID: String?,
                attempts: Int, createdAt: Int64, device: PushDeviceState?) {
        self.rid = rid
        self.token = token
        self.userID = userID
        self.platform = platform
        self.kind = kind
        self.payload = payload
        self.collapseID = collapseID
        self.attempts = attempts
        self.createdAt = createdAt
        self.device = device
    }
}

/// What a provider needs of a device beyond its token.
public struct PushDeviceState: Sendable, Equatable {
    /// `sandbox`, `production`, or nil (unknown: production first).
    public let environment: String?
    /// When the app last registered the token (milliseconds since 1970).
    public let seenAt: Int64

    public init(environment: String?, seenAt: Int64) {
        self.environment = environment
        self.seenAt = seenAt
    }
}

/// One attempt's result, recorded by the writer in one job per batch.
public struct PushAttemptRecord: Sendable {
    public enum Outcome: Sendable, Equatable {
        case delivered
        case retry(atMilliseconds: Int64)
        /// Given up for good (the device stays).
        case dead
        /// The device is gone: dropped, and the device removed (`removal`).
        case dropped
    }

    /// The device to remove: its token, why, and (APNs 410) only if it was
    /// registered before this time (milliseconds since 1970).
    public struct Removal: Sendable, Equatable {
        public let reason: String
        public let ifSeenBefore: Int64?
        public init(reason: String, ifSeenBefore: Int64?) {
            self.reason = reason
            self.ifSeenBefore = ifSeenBefore
        }
    }

    public let rid: Int64
    public let token: String
    public let attempt: Int
    public let status: Int?
    public let error: String?
    public let outcome: Outcome
    public let removal: Removal?
    /// The APNs environment that accepted a token registered without one (or with the wrong one).
    public let environment: String?

    public init(rid: Int64, token: String, attempt: Int, status: Int?, error: String?, outcome: Outcome,
                removal: Removal? = nil, environment: String? = nil) {
        self.rid = rid
        self.token = token
        self.attempt = attempt
        self.status = status
        self.error = error
        self.outcome = outcome
        self.removal = removal
        self.environment = environment
    }
}

/// A device row with its delivery counts, for the admin API and console.
public struct PushDeviceReport: Sendable {
    public let device: PushDevice
    public let environment: String?
    public let sync: Bool
    public let deliveries: Int64
    public let failures: Int64
    public let lastError: String?
    public let lastPushAt: String?
    public let seenAt: String

    public var json: JSONObject {
        var o = JSONObject()
        o["token"] = .string(PushOutbox.tokenPreview(device.token))
        o["tokenId"] = .string(PushOutbox.tokenID(device.token))
        o["userId"] = .string(device.userID)
        o["platform"] = .string(device.platform)
        o["environment"] = environment.map { .string($0) } ?? .null
        o["sync"] = .bool(sync)
        o["deliveries"] = .int(deliveries)
        o["failures"] = .int(failures)
        o["lastError"] = lastError.map { .string($0) } ?? .null
        o["lastPushAt"] = lastPushAt.map { .string($0) } ?? .null
        o["seenAt"] = .string(seenAt)
        return o
    }

    public init(device: PushDevice, environment: String?, sync: Bool, deliveries: Int64, failures: Int64, lastError: String?,
                lastPushAt: String?, seenAt: String) {
        self.device = device
        self.environment = environment
        self.sync = sync
        self.deliveries = deliveries
        self.failures = failures
        self.lastError = lastError
        self.lastPushAt = lastPushAt
        self.seenAt = seenAt
    }
}

/// Which devices an enqueued push goes to.
public struct PushAudience: Sendable {
    /// Platforms a provider is configured for (`ios` → APNs, `android` → FCM).
    public var platforms: [String]
    /// Only devices registered for silent sync pushes.
    public var syncOnly = false
    /// One device only (a coalesced sync push), else every device of the user.
    public var token: String?
    /// Silent pushes across nodes: no new one for a device that got one
    /// created after this time (a timestamp); a new one supersedes (drops)
    /// the device's older silent pushes still pending.
    public var coalesceSince: String?

    public init(platforms: [String], syncOnly: Bool = false, token: String? = nil, coalesceSince: String? = nil) {
        self.platforms = platforms
        self.syncOnly = syncOnly
        self.token = token
        self.coalesceSince = coalesceSince
    }
}

/// The push outbox's shared SQL pieces and time helpers.
public enum PushOutbox {
    /// The most devices one user keeps: registering another evicts the least recently registered.
    public static let devicesPerUser = 20

    /// What the admin API and console show of a device token: its first 6
    /// characters, never the whole (a token is a credential to push to the device).
    public static func tokenPreview(_ token: String) -> String {
        token.count > 6 ? String(token.prefix(6)) + "…" : "…"
    }

    /// A stable opaque id of a device token: the first 16 hex digits of its SHA-256.
    public static func tokenID(_ token: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(token.utf8)
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    static func milliseconds(_ timestamp: String) -> Int64 {
        Timestamp.milliseconds(timestamp) ?? 0
    }

    static func state(_ outcome: PushAttemptRecord.Outcome) -> (String, Int64) {
        switch outcome {
        case .delivered: ("delivered", 0)
        case .retry(let at): ("pending", at)
        case .dead: ("dead", 0)
        case .dropped: ("dropped", 0)
        }
    }
}

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
        for r in records {
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

extension DocumentReader {
    /// Pending pushes due by `now`, oldest first, with their device's state.
    public func duePushes(now: Int64, limit: Int) throws -> [DuePush] {
        try db.prepare("""
            SELECT p.rid, p.token, p.user_id, p.platform, p.kind, p.payload, p.collapse_id, p.attempts, p.created_at,
                   d.token IS NOT NULL, d.environment, coalesce(d.seen_at, d.updated_at)
            FROM _push_deliveries p LEFT JOIN _push_devices d ON d.token = p.token AND d.user_id = p.user_id
            WHERE p.status = 'pending' AND p.next_attempt_at <= ?1 ORDER BY p.next_attempt_at, p.rid LIMIT ?2
            """).rows([.int(now), .int(Int64(limit))]) { row in
            DuePush(rid: row.int(0), token: row.text(1), userID: row.text(2), platform: row.text(3), kind: row.text(4), payload: row.text(5),
                    collapseID: row.isNull(6) ? nil : row.text(6), attempts: Int(row.int(7)), createdAt: PushOutbox.milliseconds(row.text(8)),
                    device: row.int(9) == 0 ? nil : PushDeviceState(environment: row.isNull(10) ? nil : row.text(10),
                                                                      seenAt: PushOutbox.milliseconds(row.text(11))))
        }
    }

    /// Devices registered for silent sync pushes (at most `limit`).
    public func syncDevices(limit: Int) throws -> [PushDevice] {
        try db.prepare("SELECT token, user_id, platform FROM _push_devices WHERE sync = 1 ORDER BY user_id, token LIMIT ?1")
            .rows([.int(Int64(limit))]) { PushDevice(token: $0.text(0), userID: $0.text(1), platform: $0.text(2)) }
    }

    /// When the next pending push is due (ms), if any.
    public func nextPushDue() throws -> Int64? {
        try db.prepare("SELECT min(next_attempt_at) FROM _push_deliveries WHERE status = 'pending'").firstRow { $0.isNull(0) ? nil : $0.int(0) } ?? nil
    }

    /// Devices with their delivery counts, for the admin API (newest push first).
    public func pushDeviceReports(limit: Int) throws -> [PushDeviceReport] {
        try db.prepare("""
            SELECT token, user_id, platform, environment, sync, deliveries, failures, last_error, last_push_at, coalesce(seen_at, updated_at)
            FROM _push_devices ORDER BY last_push_at DESC, token LIMIT ?1
            """).rows([.int(Int64(limit))]) { row in
            PushDeviceReport(device: PushDevice(token: row.text(0), userID: row.text(1), platform: row.text(2)),
                             environment: row.isNull(3) ? nil : row.text(3), sync: row.int(4) != 0, deliveries: row.int(5), failures: row.int(6),
                             lastError: row.isNull(7) ? nil : row.text(7), lastPushAt: row.isNull(8) ? nil : row.text(8), seenAt: row.text(9))
        }
    }

    /// Pushes for the admin API, newest first, as JSON objects.
    public func pushDeliveries(status: String?, limit: Int) throws -> [JSONObject] {
        try pushDeliveries(status: status, limit: limit, rid: nil)
    }

    func pushDeliveries(status: String?, limit: Int, rid: Int64?) throws -> [JSONObject] {
        try db.prepare("""
            SELECT rid, token, user_id, platform, kind, status, attempts, last_status, last_error, created_at, updated_at, collapse_id
            FROM _push_deliveries WHERE (?1 IS NULL OR status = ?1) AND (?3 IS NULL OR rid = ?3) ORDER BY rid DESC LIMIT ?2
            """).rows([status.map { .text($0) } ?? .null, .int(Int64(limit)), rid.map { .int($0) } ?? .null]) { row in
            PushDeliveryJSON.object(rid: row.int(0), token: row.text(1), userID: row.text(2), platform: row.text(3), kind: row.text(4),
                                    status: row.text(5), attempts: row.int(6), lastStatus: row.isNull(7) ? nil : row.int(7),
                                    lastError: row.isNull(8) ? nil : row.text(8), createdAt: row.text(9), updatedAt: row.text(10),
                                    collapseID: row.isNull(11) ? nil : row.text(11))
        }
    }
}

extension DocumentReader {
    /// One push with its attempts, or nil.
    public func pushDelivery(rid: Int64) throws -> JSONObject? {
        guard var object = try pushDeliveries(status: nil, limit: 1, rid: rid).first else { return nil }
        object["attemptLog"] = .array(try db.prepare("SELECT attempt, at, status, error FROM _push_attempts WHERE delivery_rid = ?1 ORDER BY attempt")
            .rows([.int(rid)]) { row in
                PushDeliveryJSON.attempt(row.int(0), at: row.text(1), status: row.isNull(2) ? nil : row.int(2), error: row.isNull(3) ? nil : row.text(3))
            })
        return object
    }
}

/// A push delivery as the admin API shows it (both engines).
public enum PushDeliveryJSON {
    public static func attempt(_ n: Int64, at: String, status: Int64?, error: String?) -> JSONValue {
        var o = JSONObject()
        o["attempt"] = .int(n)
        o["at"] = .string(at)
        o["status"] = status.map { .int($0) } ?? .null
        o["error"] = error.map { .string($0) } ?? .null
        return .object(o)
    }

    public static func object(rid: Int64, token: String, userID: String, platform: String, kind: String, status: String, attempts: Int64,
                              lastStatus: Int64?, lastError: String?, createdAt: String, updatedAt: String, collapseID: String?) -> JSONObject {
        var o = JSONObject()
        o["id"] = .int(rid)
        o["token"] = .string(PushOutbox.tokenPreview(token))
        o["tokenId"] = .string(PushOutbox.tokenID(token))
        o["userId"] = .string(userID)
        o["platform"] = .string(platform)
        o["kind"] = .string(kind)
        o["status"] = .string(status)
        o["attempts"] = .int(attempts)
        o["lastStatus"] = lastStatus.map { .int($0) } ?? .null
        o["lastError"] = lastError.map { .string($0) } ?? .null
        o["collapseId"] = collapseID.map { .string($0) } ?? .null
        o["createdAt"] = .string(createdAt)
        o["updatedAt"] = .string(updatedAt)
        return o
    }
}

extension PushOutbox {
    /// SQLite's migration 12.
    static let migration = """
        ALTER TABLE _push_devices ADD COLUMN environment TEXT;
        ALTER TABLE _push_devices ADD COLUMN sync INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN seen_at TEXT;
        ALTER TABLE _push_devices ADD COLUMN deliveries INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN last_error TEXT;
        ALTER TABLE _push_devices ADD COLUMN last_push_at TEXT;
        CREATE TABLE _push_deliveries (
            rid INTEGER PRIMARY KEY,
            token TEXT NOT NULL,
            user_id TEXT NOT NULL,
            platform TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('alert', 'background')),
            payload TEXT NOT NULL,
            collapse_id TEXT,
            status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'dropped')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            last_status INTEGER,
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX _push_deliveries_due ON _push_deliveries(status, next_attempt_at);
        CREATE INDEX _push_deliveries_token ON _push_deliveries(token, status);
        CREATE INDEX _push_deliveries_finished ON _push_deliveries(kind, status, updated_at);
        CREATE TABLE _push_attempts (
            delivery_rid INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            at TEXT NOT NULL,
            status INTEGER,
            error TEXT,
            PRIMARY KEY (delivery_rid, attempt)
        );
        """
}
