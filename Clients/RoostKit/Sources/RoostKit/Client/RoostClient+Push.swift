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

    /// Registers this device's push token for the signed-in user
    /// (`POST /push/devices`). A token registered by another user moves to this one.
    @discardableResult
    public func registerPushDevice(token: String, platform: PushPlatform = .ios) async throws -> PushDevice {
        let body: JSONValue = ["token": .string(token), "platform": .string(platform.rawValue)]
        return try await call("POST", ["push", "devices"], body: Self.body(body)).decode(PushDevice.self)
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
