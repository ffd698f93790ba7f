import Foundation

/// A device registered for push notifications.
public struct PushDevice: Codable, Sendable, Hashable {
    /// The platform's device token.
    public let token: String
    /// `ios`, `android` or `web`.
    public let platform: String
    /// The user it belongs to.
    public let userId: String
}

extension RoostClient {
    /// The platform of a push token.
    public enum PushPlatform: String, Sendable { case ios, android, web }

    /// The APNs environment an iOS build's tokens belong to (debug builds: sandbox).
    public enum PushEnvironment: String, Sendable { case sandbox, production }

    /// Registers this device's push token for the signed-in user
    /// (`POST /push/devices`). A token registered by another user moves to
    /// this one. Call it at every launch: it renews the token on the server.
    ///
    /// - Parameters:
    ///   - environment: iOS only; without it the server finds out (production first).
    ///   - sync: wake this device with silent pushes when data it may read
    ///     changes in a `push_sync: true` collection; hand them to
    ///     ``OfflineStore/handleSyncPush(userInfo:timeLimit:)``.
    @discardableResult
    public func registerPushDevice(token: String, platform: PushPlatform = .ios, environment: PushEnvironment? = nil,
                                   sync: Bool = false) async throws -> PushDevice {
        var body: JSONValue = ["token": .string(token), "platform": .string(platform.rawValue)]
        if case .object(var o) = body {
            if let environment { o["environment"] = .string(environment.rawValue) }
            if sync { o["sync"] = .bool(true) }
            body = .object(o)
        }
        return try await call("POST", ["push", "devices"], body: Self.body(body)).decode(PushDevice.self)
    }

    /// Registers an APNs token as `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` hands it over.
    @discardableResult
    public func registerPushDevice(apnsToken: Data, environment: PushEnvironment? = nil, sync: Bool = true) async throws -> PushDevice {
        try await registerPushDevice(token: apnsToken.map { String(format: "%02x", $0) }.joined(), platform: .ios,
                                     environment: environment, sync: sync)
    }

    /// Removes a push token (`DELETE /push/devices/:token`); ``ServerError/Code/notFound`` if it is not yours.
    public func removePushDevice(token: String) async throws {
        try await call("DELETE", ["push", "devices", token])
    }

    /// The signed-in user's push devices (`GET /push/devices`).
    public func pushDevices() async throws -> [PushDevice] {
        try await call("GET", ["push", "devices"]).decode([PushDevice].self)
    }
}

/// A silent sync push from Roost: `{"aps": {"content-available": 1}, "roost": {"sync": [collections]}}`
/// on APNs, `data.roost = "{\"sync\": [...]}"` on FCM.
public struct SyncPush: Sendable, Hashable {
    /// The collections that changed.
    public let collections: [String]

    /// Reads a notification's `userInfo` (APNs) or data (FCM); nil when it is not Roost's sync push.
    public init?(userInfo: [AnyHashable: Any]) {
        var roost = userInfo["roost"]
        if let text = roost as? String, let data = text.data(using: .utf8) { roost = try? JSONSerialization.jsonObject(with: data) }
        guard let object = roost as? [String: Any], let names = object["sync"] as? [String] else { return nil }
        collections = names
    }
}

/// What ``OfflineStore/handleSyncPush(userInfo:timeLimit:)`` did, to answer iOS's fetch completion handler.
public enum SyncPushResult: Sendable {
    /// Not a Roost sync push: nothing was done (`.noData`).
    case notRoost
    /// Synced (`.newData` when `report.changed > 0`, else `.noData`).
    case synced(SyncReport)
    /// The sync failed or ran out of background time (`.failed`); the next launch or push syncs again.
    case failed(String)
}

extension OfflineStore {
    /// Syncs on a silent push, within iOS's background time: call it from
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
    /// (or FCM's `onMessageReceived`) and answer the completion handler from the result.
    ///
    /// ```swift
    /// func application(_ app: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
    ///                  fetchCompletionHandler done: @escaping (UIBackgroundFetchResult) -> Void) {
    ///     Task {
    ///         switch await store.handleSyncPush(userInfo: userInfo) {
    ///         case .synced(let report): done(report.changed > 0 ? .newData : .noData)
    ///         case .notRoost: done(.noData)
    ///         case .failed: done(.failed)
    ///         }
    ///     }
    /// }
    /// ```
    /// - Parameter timeLimit: seconds to give the sync (iOS allows about 30 in all).
    public func handleSyncPush(userInfo: [AnyHashable: Any], timeLimit: Double = 25) async -> SyncPushResult {
        guard SyncPush(userInfo: userInfo) != nil else { return .notRoost }
        return await withTaskGroup(of: SyncPushResult?.self) { group in
            group.addTask {
                do { return .synced(try await self.sync()) } catch { return .failed("\(error)") }
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeLimit * 1_000_000_000))
                return Task.isCancelled ? nil : .failed("the sync took longer than \(timeLimit) s")
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failed("cancelled")
        }
    }
}
