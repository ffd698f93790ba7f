import Foundation
import JSON
import Store

/// Apple Push Notification service, token-based: an ES256 provider JWT
/// (`kid` = key id, `iss` = team id, `iat`) signed once and reused for
/// `tokenLifetime` seconds (a new one per request gets 429
/// `TooManyProviderTokenUpdates`), refreshed early once on 403
/// `ExpiredProviderToken`. Requests go to the device's environment
/// (production unless registered as sandbox). Used by one thread.
public final class APNsProvider {
    public struct Settings: Sendable, Equatable {
        public var keyID: String
        public var teamID: String
        /// The app's bundle id (`apns-topic`).
        public var topic: String
        public var productionURL = "https://api.push.apple.com"
        public var sandboxURL = "https://api.sandbox.push.apple.com"
        /// Seconds a provider token is reused (Apple: at least 20 minutes, at most 60).
        public var tokenLifetime = 3000

        public init(keyID: String, teamID: String, topic: String) {
            self.keyID = keyID
            self.teamID = teamID
            self.topic = topic
        }
    }

    let settings: Settings
    let signer: JWTSigner
    private var current: (jwt: String, issuedAt: Int64)?
    /// Provider tokens signed so far (for tests and logs).
    public private(set) var tokensSigned = 0

    /// - Parameter keyPEM: the `.p8` file's text (read from a file or the environment, never YAML).
    public init(settings: Settings, keyPEM: String) throws {
        self.settings = settings
        do { signer = try JWTSigner(pem: keyPEM, algorithm: .es256) } catch {
            throw PushError("the APNs key (.p8) cannot be used: \(error)")
        }
    }

    /// The provider token, signed anew only when the last one is `tokenLifetime` old.
    func providerToken(now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> String {
        if let current, now - current.issuedAt < Int64(settings.tokenLifetime) { return current.jwt }
        var header = JSONObject()
        header["kid"] = .string(settings.keyID)
        var claims = JSONObject()
        claims["iss"] = .string(settings.teamID)
        claims["iat"] = .int(now)
        let jwt = try signer.token(header: header, claims: claims)
        current = (jwt, now)
        tokensSigned += 1
        return jwt
    }

    /// Forgets the provider token (after `ExpiredProviderToken`): the next request signs a new one.
    func expireToken() { current = nil }

    func url(environment: String) -> String {
        environment == "sandbox" ? settings.sandboxURL : settings.productionURL
    }

    /// The request for one push to `environment` (`production` or `sandbox`).
    func request(_ push: DuePush, _ notification: PushNotification, payload: [UInt8], environment: String) throws -> HTTP2Request {
        var headers: [(String, String)] = [
            ("authorization", "bearer " + (try providerToken())),
            ("apns-topic", settings.topic),
            ("apns-push-type", notification.background ? "background" : "alert"),
            ("apns-priority", notification.background ? "5" : "10"),
            ("apns-expiration", String(push.createdAt / 1000 + Int64(notification.timeToLive))),
            ("content-type", "application/json"),
        ]
        if let collapse = push.collapseID { headers.append(("apns-collapse-id", Self.prefix(collapse, bytes: 64))) }
        return HTTP2Request(url: url(environment: environment) + "/3/device/" + Self.pathSegment(push.token), headers: headers, body: payload)
    }

    /// A device token as one path segment: anything but letters, digits and `-._~` percent-encoded
    /// (APNs tokens are hex; a client's odd token then only ever reaches `/3/device/…` as refused).
    static func pathSegment(_ token: String) -> String {
        var out = ""
        for byte in token.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// The longest prefix of `text` within `bytes` UTF-8 bytes (APNs takes collapse ids of up to 64).
    static func prefix(_ text: String, bytes: Int) -> String {
        var out = ""
        var used = 0
        for c in text.unicodeScalars {
            used += String(c).utf8.count
            if used > bytes { break }
            out.unicodeScalars.append(c)
        }
        return out
    }

    /// What APNs's answer means.
    static func verdict(_ response: HTTP2Response) -> ProviderVerdict {
        guard let status = response.status else { return .retry(retryAfter: nil, reason: response.error ?? "no response") }
        if status == 200 { return .delivered }
        let answer = (try? JSONParser.parse(response.body))?.objectValue
        let reason = answer?["reason"]?.stringValue ?? "HTTP \(status)"
        switch (status, reason) {
        case (410, _):
            // Unregistered: the token stopped being valid at `timestamp` (ms).
            var at: Int64?
            if case .int(let t)? = answer?["timestamp"] { at = t } else if case .double(let t)? = answer?["timestamp"] { at = Int64(t) }
            return .removeDevice(reason: "APNs 410 \(reason)", ifSeenBefore: at ?? Int64(Date().timeIntervalSince1970 * 1000))
        case (400, "BadDeviceToken"):
            return .tryOtherEnvironment(reason: "APNs 400 BadDeviceToken")
        case (400, "DeviceTokenNotForTopic"):
            // Most likely push.apns.topic is wrong, not the token: keep the device.
            return .dead(reason: "APNs 400 DeviceTokenNotForTopic")
        case (403, "ExpiredProviderToken"):
            return .refreshCredential(reason: "APNs 403 ExpiredProviderToken")
        case (429, _), (500..<600, _):
            return .retry(retryAfter: response.retryAfter, reason: "APNs \(status) \(reason)")
        default:
            return .dead(reason: "APNs \(status) \(reason)")
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
