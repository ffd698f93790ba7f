import Foundation
import JSON
import Store

/// A webhook delivery and its attempts as the admin API shows them
/// (`GET /admin/webhooks/deliveries[/{id}]`), from either engine's record.
enum DeliveryJSON {
    /// One delivery; `nextAttemptAt` shows only while it is pending. A
    /// single delivery's record adds its event data and attempt log.
    static func object(_ d: WebhookDeliveryRecord) -> JSONObject {
        var o = JSONObject()
        o["id"] = .string(String(d.rid))
        o["webhookId"] = .string("msg_" + d.eventID)
        o["eventId"] = .string(d.eventID)
        o["type"] = .string(d.type)
        o["endpoint"] = .string(d.endpoint)
        o["status"] = .string(d.status)
        o["attempts"] = .int(d.attempts)
        o["nextAttemptAt"] = d.status == "pending" ? .string(Timestamp.format(Date(timeIntervalSince1970: Double(d.nextAttemptAt) / 1000))) : .null
        o["lastStatus"] = d.lastStatus.map { .int($0) } ?? .null
        o["lastError"] = d.lastError.map { .string($0) } ?? .null
        o["createdAt"] = .string(d.createdAt)
        o["updatedAt"] = .string(d.updatedAt)
        if let data = d.data { o["data"] = data }
        if let log = d.attemptLog { o["attemptLog"] = .array(log.map(attempt)) }
        return o
    }

    /// One entry of a delivery's attempt log.
    static func attempt(_ a: WebhookDeliveryRecord.Attempt) -> JSONValue {
        var o = JSONObject()
        o["attempt"] = .int(a.attempt)
        o["at"] = .string(a.at)
        o["status"] = a.status.map { .int($0) } ?? .null
        o["error"] = a.error.map { .string($0) } ?? .null
        o["durationMs"] = .int(a.durationMilliseconds)
        return .object(o)
    }
}
