import JSON
import Store

/// Pushes and devices as the admin API shows them (`/admin/push/...`),
/// from either engine's record. Tokens show only as a preview and an id.
enum PushDeliveryJSON {
    /// One push; a single push's record adds its attempt log.
    static func object(_ p: PushDeliveryRecord) -> JSONObject {
        var o = JSONObject()
        o["id"] = .int(p.rid)
        o["token"] = .string(PushOutbox.tokenPreview(p.token))
        o["tokenId"] = .string(PushOutbox.tokenID(p.token))
        o["userId"] = .string(p.userID)
        o["platform"] = .string(p.platform)
        o["kind"] = .string(p.kind)
        o["status"] = .string(p.status)
        o["attempts"] = .int(p.attempts)
        o["lastStatus"] = p.lastStatus.map { .int($0) } ?? .null
        o["lastError"] = p.lastError.map { .string($0) } ?? .null
        o["collapseId"] = p.collapseID.map { .string($0) } ?? .null
        o["createdAt"] = .string(p.createdAt)
        o["updatedAt"] = .string(p.updatedAt)
        if let log = p.attemptLog { o["attemptLog"] = .array(log.map(attempt)) }
        return o
    }

    static func attempt(_ a: PushDeliveryRecord.Attempt) -> JSONValue {
        var o = JSONObject()
        o["attempt"] = .int(a.attempt)
        o["at"] = .string(a.at)
        o["status"] = a.status.map { .int($0) } ?? .null
        o["error"] = a.error.map { .string($0) } ?? .null
        return .object(o)
    }

    /// A device row with its delivery counts (the console's push page).
    static func report(_ r: PushDeviceReport) -> JSONObject {
        var o = JSONObject()
        o["token"] = .string(PushOutbox.tokenPreview(r.device.token))
        o["tokenId"] = .string(PushOutbox.tokenID(r.device.token))
        o["userId"] = .string(r.device.userID)
        o["platform"] = .string(r.device.platform)
        o["environment"] = r.environment.map { .string($0) } ?? .null
        o["sync"] = .bool(r.sync)
        o["deliveries"] = .int(r.deliveries)
        o["failures"] = .int(r.failures)
        o["lastError"] = r.lastError.map { .string($0) } ?? .null
        o["lastPushAt"] = r.lastPushAt.map { .string($0) } ?? .null
        o["seenAt"] = .string(r.seenAt)
        return o
    }
}
