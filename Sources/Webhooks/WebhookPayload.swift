import JSON

/// The request body of a delivery, by the endpoint's format.
///
/// - `standard`: `{"type", "timestamp", "data"}`: the Standard Webhooks shape.
/// - `gorush`: the body of gorush's `POST /api/push`, one notification per
///   platform with the recipients' tokens (web tokens are not gorush's and are left out).
public enum WebhookPayload {
    /// The body to send, or nil when there is nothing to send (a gorush
    /// endpoint and no iOS or Android token).
    public static func body(format: String, type: String, timestamp: String, data: String) -> [UInt8]? {
        switch format {
        case "gorush": return gorush(data).map { Array($0.utf8) }
        default: return Array(standard(type: type, timestamp: timestamp, data: data).utf8)
        }
    }

    public static func standard(type: String, timestamp: String, data: String) -> String {
        "{\"type\":\(JSONWriter.quoted(type)),\"timestamp\":\(JSONWriter.quoted(timestamp)),\"data\":\(data)}"
    }

    /// gorush's platform numbers.
    static let platforms: [(name: String, number: Int64)] = [("ios", 1), ("android", 2)]

    static func gorush(_ data: String) -> String? {
        guard case .object(let event)? = try? JSONParser.parse(data) else { return nil }
        let message = event["message"]?.objectValue ?? JSONObject()
        let sender = event["sender"]?.objectValue ?? JSONObject()
        let devices = (event["recipients"]?.arrayValue ?? []).flatMap { $0.objectValue?["devices"]?.arrayValue ?? [] }
        let text = message["text"]?.stringValue ?? message["messageText"]?.stringValue ?? ""
        let title = sender["name"]?.stringValue ?? sender["username"]?.stringValue ?? "New message"
        var custom = JSONObject()
        custom["messageId"] = message["_id"] ?? .null
        custom["threadId"] = message["threadId"] ?? .null
        custom["senderId"] = sender["_id"] ?? .null
        var notifications: [JSONValue] = []
        for (name, number) in platforms {
            let tokens = devices.compactMap { d -> JSONValue? in
                guard let o = d.objectValue, o["platform"]?.stringValue == name, let t = o["token"] else { return nil }
                return t
            }
            guard !tokens.isEmpty else { continue }
            var n = JSONObject()
            n["tokens"] = .array(tokens)
            n["platform"] = .int(number)
            n["title"] = .string(title)
            n["message"] = .string(text)
            n["data"] = .object(custom)
            notifications.append(.object(n))
        }
        guard !notifications.isEmpty else { return nil }
        var body = JSONObject()
        body["notifications"] = .array(notifications)
        return body.jsonText
    }
}
