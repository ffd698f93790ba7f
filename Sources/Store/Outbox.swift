import Foundation
import JSON

/// A delivery that is due: the event, its endpoint and how often it was tried.
public struct DueDelivery: Sendable {
    public let rid: Int64
    public let eventID: String
    public let type: String
    public let createdAt: String
    /// The event's data, as JSON text.
    public let data: String
    public let attempts: Int
    public let endpoint: WebhookEndpointRecord

    public init(rid: Int64, eventID: String, type: String, createdAt: String, data: String, attempts: Int,
                endpoint: WebhookEndpointRecord) {
        self.rid = rid
        self.eventID = eventID
        self.type = type
        self.createdAt = createdAt
        self.data = data
        self.attempts = attempts
        self.endpoint = endpoint
    }
}

/// What one delivery attempt decided.
public enum DeliveryOutcome: Sendable {
    case delivered
    /// Try again at this time (milliseconds since the epoch).
    case retry(atMilliseconds: Int64)
    /// The last attempt failed, or the endpoint is gone: dead-lettered.
    case dead
}

/// The durable outbox: events are written in the same transaction as the
/// write that caused them, with one delivery row per subscribed endpoint.
/// Rows stay until delivered (or dead-lettered), so a crash loses nothing.
public enum Outbox {
    public static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
