import CSodium
import Foundation
import JSON
import Jobs
import Store

/// The push outbox on SQLite, the readers' side: due pushes, sync devices and
/// what the admin API and console show.
extension DocumentReader {
    /// Pending pushes due by `now`, oldest first, with their device's state.
    public func duePushes(now: Int64, limit: Int) throws -> [DuePush] {
        var giveWay = GiveWay()  // hundreds of rows on the push thread: the loops come first
        return try db.prepare("""
            SELECT p.rid, p.token, p.user_id, p.platform, p.kind, p.payload, p.collapse_id, p.attempts, p.created_at,
                   d.token IS NOT NULL, d.environment, coalesce(d.seen_at, d.updated_at)
            FROM _push_deliveries p LEFT JOIN _push_devices d ON d.token = p.token AND d.user_id = p.user_id
            WHERE p.status = 'pending' AND p.next_attempt_at <= ?1 ORDER BY p.next_attempt_at, p.rid LIMIT ?2
            """).rows([.int(now), .int(Int64(limit))]) { row in
            giveWay.check()
            return DuePush(rid: row.int(0), token: row.text(1), userID: row.text(2), platform: row.text(3), kind: row.text(4), payload: row.text(5),
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

    /// Pushes for the admin API, newest first.
    public func pushDeliveries(status: String?, limit: Int) throws -> [PushDeliveryRecord] {
        try pushDeliveries(status: status, limit: limit, rid: nil)
    }

    func pushDeliveries(status: String?, limit: Int, rid: Int64?) throws -> [PushDeliveryRecord] {
        try db.prepare("""
            SELECT rid, token, user_id, platform, kind, status, attempts, last_status, last_error, created_at, updated_at, collapse_id
            FROM _push_deliveries WHERE (?1 IS NULL OR status = ?1) AND (?3 IS NULL OR rid = ?3) ORDER BY rid DESC LIMIT ?2
            """).rows([status.map { .text($0) } ?? .null, .int(Int64(limit)), rid.map { .int($0) } ?? .null]) { row in
            PushDeliveryRecord(rid: row.int(0), token: row.text(1), userID: row.text(2), platform: row.text(3), kind: row.text(4),
                                    status: row.text(5), attempts: row.int(6), lastStatus: row.isNull(7) ? nil : row.int(7),
                                    lastError: row.isNull(8) ? nil : row.text(8), createdAt: row.text(9), updatedAt: row.text(10),
                                    collapseID: row.isNull(11) ? nil : row.text(11))
        }
    }
}

extension DocumentReader {
    /// One push with its attempts, or nil.
    public func pushDelivery(rid: Int64) throws -> PushDeliveryRecord? {
        guard var push = try pushDeliveries(status: nil, limit: 1, rid: rid).first else { return nil }
        push.attemptLog = try db.prepare("SELECT attempt, at, status, error FROM _push_attempts WHERE delivery_rid = ?1 ORDER BY attempt")
            .rows([.int(rid)]) { row in
                PushDeliveryRecord.Attempt(attempt: row.int(0), at: row.text(1), status: row.isNull(2) ? nil : row.int(2), error: row.isNull(3) ? nil : row.text(3))
            }
        return push
    }
}
