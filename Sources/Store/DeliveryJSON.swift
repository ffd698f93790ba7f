import Foundation
import JSON

/// A webhook delivery and its attempts as the admin API shows them, built
/// the same way from either engine's row.
public enum DeliveryJSON {
    /// One delivery; `nextAttemptAt` (ms) shows only while it is pending.
    public static func delivery(rid: Int64, eventID: String, type: String, endpoint: String, status: String, attempts: Int64,
                                nextAttemptAt: Int64, lastStatus: Int64?, lastError: String?,
                                createdAt: String, updatedAt: String) -> JSONObject {
        var o = JSONObject()
        o["id"] = .string(String(rid))
        o["webhookId"] = .string("msg_" + eventID)
        o["eventId"] = .string(eventID)
        o["type"] = .string(type)
        o["endpoint"] = .string(endpoint)
        o["status"] = .string(status)
        o["attempts"] = .int(attempts)
        o["nextAttemptAt"] = status == "pending" ? .string(Timestamp.format(Date(timeIntervalSince1970: Double(nextAttemptAt) / 1000))) : .null
        o["lastStatus"] = lastStatus.map { .int($0) } ?? .null
        o["lastError"] = lastError.map { .string($0) } ?? .null
        o["createdAt"] = .string(createdAt)
        o["updatedAt"] = .string(updatedAt)
        return o
    }

    /// One entry of a delivery's attempt log.
    public static func attempt(_ attempt: Int64, at: String, status: Int64?, error: String?, durationMilliseconds: Int64) -> JSONValue {
        var a = JSONObject()
        a["attempt"] = .int(attempt)
        a["at"] = .string(at)
        a["status"] = status.map { .int($0) } ?? .null
        a["error"] = error.map { .string($0) } ?? .null
        a["durationMs"] = .int(durationMilliseconds)
        return .object(a)
    }
}
