import Foundation
import Jobs
import JSON
import Push
import Store

/// The one way a push enters the outbox: a notification for every device
/// of a user on a platform with a configured provider, written in the
/// caller's transaction (so a rolled-back write sends nothing and a
/// committed one always does, across a crash), then delivered by
/// `PushDispatcher`. Built-in message pushes, silent sync pushes and
/// scripts (`roost.push(userId, notification)`) all come through here.
public struct PushSender: Sendable {
    /// `ios` when APNs is configured, `android` when FCM is.
    public let platforms: [String]
    /// Set when a push was written: the commit wakes the dispatcher.
    let outboxDirty: LockedBox<Bool>

    init(config: RoostConfig.Push, outboxDirty: LockedBox<Bool>) {
        platforms = (config.apns == nil ? [] : ["ios"]) + (config.fcm == nil ? [] : ["android"])
        self.outboxDirty = outboxDirty
    }

    /// Whether any provider is configured.
    public var isEnabled: Bool { !platforms.isEmpty }

    /// Enqueues `notification` for `userID`'s devices (only those registered
    /// for sync when `syncOnly`; only `token` when given).
    /// - Returns: how many devices it goes to.
    @discardableResult
    public func enqueue(_ writer: any PushWriting, userID: String, notification: PushNotification, collapseID: String? = nil,
                        syncOnly: Bool = false, token: String? = nil, coalesceSeconds: Double? = nil) throws -> Int {
        guard isEnabled else { return 0 }
        let since = coalesceSeconds.map { Timestamp.format(Date().addingTimeInterval(-$0)) }
        let count = try writer.enqueuePush(userID: userID, kind: notification.kind, payload: notification.json.jsonText, collapseID: collapseID,
                                           audience: PushAudience(platforms: platforms, syncOnly: syncOnly, token: token, coalesceSince: since))
        if count > 0 { outboxDirty.set(true) }
        return count
    }
}
