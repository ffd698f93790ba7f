import JSON

/// A notification as the outbox keeps it, before it is shaped for a
/// provider: an alert (title, body, thread, badge, custom data) or a silent
/// background push (data only). Stored as JSON text in `_push_deliveries.payload`.
public struct PushNotification: Sendable, Equatable {
    public var title: String?
    public var body: String?
    /// Groups notifications (APNs `thread-id`; FCM `android.notification.tag`).
    public var threadID: String?
    /// Set only when the count is exact.
    public var badge: Int?
    public var sound: String?
    /// APNs `mutable-content`, for a notification service extension (rich notifications).
    public var mutableContent = false
    /// Custom keys for the app (APNs: top-level keys; FCM: `data`, as strings).
    public var data = JSONObject()
    /// A silent push that wakes the app (APNs `content-available`, priority 5; an FCM data message).
    public var background = false
    /// Seconds the provider keeps an undeliverable notification (APNs `apns-expiration`, FCM `ttl`).
    public var timeToLive: Int = 86_400

    public init(title: String? = nil, body: String? = nil, threadID: String? = nil, badge: Int? = nil, sound: String? = nil,
                mutableContent: Bool = false, data: JSONObject = JSONObject(), background: Bool = false, timeToLive: Int = 86_400) {
        self.title = title
        self.body = body
        self.threadID = threadID
        self.badge = badge
        self.sound = sound
        self.mutableContent = mutableContent
        self.data = data
        self.background = background
        self.timeToLive = timeToLive
    }

    /// APNs refuses payloads over 4 KB (`PayloadTooLarge`).
    public static let apnsPayloadLimit = 4096

    public var kind: String { background ? "background" : "alert" }

    /// The stored form.
    public var json: JSONObject {
        var o = JSONObject()
        if let title { o["title"] = .string(title) }
        if let body { o["body"] = .string(body) }
        if let threadID { o["threadId"] = .string(threadID) }
        if let badge { o["badge"] = .int(Int64(badge)) }
        if let sound { o["sound"] = .string(sound) }
        if mutableContent { o["mutableContent"] = .bool(true) }
        if !data.isEmpty { o["data"] = .object(data) }
        if background { o["background"] = .bool(true) }
        o["ttl"] = .int(Int64(timeToLive))
        return o
    }

    /// Reads the stored form (or a script's notification object); nil when it is not an object.
    public init?(json: JSONValue) {
        guard case .object(let o) = json else { return nil }
        title = o["title"]?.stringValue
        body = o["body"]?.stringValue
        threadID = o["threadId"]?.stringValue
        if case .int(let b)? = o["badge"], (0...100_000).contains(b) { badge = Int(b) }
        sound = o["sound"]?.stringValue
        mutableContent = o["mutableContent"] == .bool(true)
        data = o["data"]?.objectValue ?? JSONObject()
        background = o["background"] == .bool(true)
        if case .int(let t)? = o["ttl"], (0...2_419_200).contains(t) { timeToLive = Int(t) }
    }

    /// The APNs payload, at most `apnsPayloadLimit` bytes: a long body is
    /// shortened (with an ellipsis) to fit; nil when even that cannot fit.
    public func apnsPayload() -> [UInt8]? {
        func encoded(_ body: String?) -> [UInt8] { Array(apnsObject(body: body).jsonText.utf8) }
        let whole = encoded(body)
        if whole.count <= Self.apnsPayloadLimit { return whole }
        guard let body else { return nil }
        // The longest prefix (in Unicode scalars) that fits with an ellipsis: a binary search, as escaping makes sizes uneven.
        let scalars = Array(body.unicodeScalars)
        func shortened(_ n: Int) -> String {
            var s = String.UnicodeScalarView()
            s.append(contentsOf: scalars[..<n])
            return String(s) + "…"
        }
        var (fits, over) = (-1, scalars.count)
        while over - fits > 1 {
            let mid = (fits + over) / 2
            if encoded(shortened(max(mid, 0))).count <= Self.apnsPayloadLimit { fits = mid } else { over = mid }
        }
        return fits < 0 ? nil : encoded(shortened(fits))
    }

    func apnsObject(body: String?) -> JSONObject {
        var aps = JSONObject()
        if background {
            aps["content-available"] = .int(1)
        } else {
            var alert = JSONObject()
            if let title { alert["title"] = .string(title) }
            if let body { alert["body"] = .string(body) }
            aps["alert"] = .object(alert)
            aps["sound"] = .string(sound ?? "default")
            if mutableContent { aps["mutable-content"] = .int(1) }
        }
        if let threadID { aps["thread-id"] = .string(threadID) }
        if let badge { aps["badge"] = .int(Int64(badge)) }
        var root = JSONObject()
        root["aps"] = .object(aps)
        for (k, v) in data where k != "aps" { root[k] = v }
        return root
    }

    /// The FCM HTTP v1 `messages:send` body for `token`.
    public func fcmBody(token: String, collapseKey: String?) -> [UInt8] {
        var message = JSONObject()
        message["token"] = .string(token)
        var strings = JSONObject()
        for (k, v) in data { strings[k] = .string(v.stringValue ?? v.jsonText) }
        if let threadID { strings["threadId"] = .string(threadID) }
        if !strings.isEmpty { message["data"] = .object(strings) }
        var android = JSONObject()
        android["priority"] = .string(background ? "NORMAL" : "HIGH")
        android["ttl"] = .string("\(timeToLive)s")
        if let collapseKey { android["collapse_key"] = .string(collapseKey) }
        if !background {
            var notification = JSONObject()
            if let title { notification["title"] = .string(title) }
            if let body { notification["body"] = .string(body) }
            message["notification"] = .object(notification)
            var androidNotification = JSONObject()
            if let threadID { androidNotification["tag"] = .string(threadID) }
            if let badge { androidNotification["notification_count"] = .int(Int64(badge)) }
            if !androidNotification.isEmpty { android["notification"] = .object(androidNotification) }
        }
        message["android"] = .object(android)
        var root = JSONObject()
        root["message"] = .object(message)
        return Array(root.jsonText.utf8)
    }
}

