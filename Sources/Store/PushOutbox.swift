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

    package static func milliseconds(_ timestamp: String) -> Int64 {
        Timestamp.milliseconds(timestamp) ?? 0
    }

    package static func state(_ outcome: PushAttemptRecord.Outcome) -> (String, Int64) {
        switch outcome {
        case .delivered: ("delivered", 0)
        case .retry(let at): ("pending", at)
        case .dead: ("dead", 0)
        case .dropped: ("dropped", 0)
        }
    }
}
