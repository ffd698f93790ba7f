import Foundation
import Store

extension RoostConfig {
    /// The messaging pair: which collections behave like the seed app's threads and messages.
    public struct Messaging: Sendable, Equatable {
        public var enabled = true
        public var threads = "threads"
        public var messages = "messages"
    }

    /// Outgoing webhooks: endpoints from the config file and delivery settings.
    public struct Webhooks: Sendable, Equatable {
        public var endpoints: [WebhookEndpointRecord] = []
        /// Seconds to wait after each failed attempt; its length sets the number of attempts.
        public var retrySchedule: [Double] = [5, 300, 1800, 7200, 18000, 36000, 36000]
        /// Seconds one attempt may take.
        public var timeout: Double = 15
        /// Delivery threads.
        public var workers = 2
    }

    mutating func applyMessaging(_ value: Any) throws {
        guard let map = value as? [String: Any] else { throw Invalid("messaging must be a mapping") }
        for (key, v) in map {
            switch key {
            case "enabled":
                guard let b = v as? Bool else { throw Invalid("messaging.enabled must be true or false") }
                messaging.enabled = b
            case "threads", "messages":
                let name = "\(v)"
                guard CollectionName.isValid(name) else { throw Invalid("messaging.\(key): \"\(name)\" is not a valid collection name") }
                if key == "threads" { messaging.threads = name } else { messaging.messages = name }
            default:
                throw Invalid("messaging: unknown setting \"\(key)\" (use enabled, threads, messages)")
            }
        }
        guard messaging.threads != messaging.messages else { throw Invalid("messaging.threads and messaging.messages must differ") }
    }

    mutating func applyWebhooks(_ value: Any) throws {
        guard let map = value as? [String: Any] else { throw Invalid("webhooks must be a mapping") }
        for (key, v) in map {
            switch key {
            case "retry_schedule":
                let items = (v as? [Any]) ?? []
                let delays = items.compactMap { ($0 as? Double) ?? ($0 as? Int).map(Double.init) ?? Double("\($0)") }
                guard delays.count == items.count, delays.count <= 50, delays.allSatisfy({ $0 >= 0 && $0 <= 7 * 86_400 }) else {
                    throw Invalid("webhooks.retry_schedule must be a list of at most 50 delays in seconds (0 to 604800)")
                }
                webhooks.retrySchedule = delays
            case "timeout":
                guard let t = (v as? Double) ?? (v as? Int).map(Double.init), t > 0, t <= 300 else {
                    throw Invalid("webhooks.timeout must be seconds from 0 to 300")
                }
                webhooks.timeout = t
            case "workers":
                guard let n = v as? Int, (1...64).contains(n) else { throw Invalid("webhooks.workers must be from 1 to 64") }
                webhooks.workers = n
            case "endpoints":
                guard let list = v as? [Any] else { throw Invalid("webhooks.endpoints must be a list") }
                webhooks.endpoints = try list.enumerated().map { try Self.endpoint($1, index: $0, source: "config") }
                let names = webhooks.endpoints.map(\.name)
                guard Set(names).count == names.count else { throw Invalid("webhooks.endpoints: names must be unique") }
            default:
                throw Invalid("webhooks: unknown setting \"\(key)\" (use endpoints, retry_schedule, timeout, workers)")
            }
        }
    }

    /// Event types an endpoint may ask for: `message.created`, `<collection>.created|updated|deleted`,
    /// `push.notification` and `script.<event>` (from scripts), `*`.
    static func isKnownEventType(_ type: String) -> Bool {
        if type == "*" || type == "message.created" || type == "push.notification" { return true }
        if type.hasPrefix("script."), type.utf8.count > 7, type.utf8.count <= 135,
           type.dropFirst(7).allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) { return true }
        let parts = type.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && CollectionName.isWellFormed(String(parts[0])) && ["created", "updated", "deleted"].contains(String(parts[1]))
    }

    /// Checks one endpoint from the config file or the admin API.
    static func endpoint(_ value: Any, index: Int, source: String) throws -> WebhookEndpointRecord {
        guard let map = value as? [String: Any] else { throw Invalid("webhooks.endpoints[\(index)] must be a mapping") }
        let allowed: Set<String> = ["name", "url", "secret", "events", "format"]
        if let unknown = map.keys.first(where: { !allowed.contains($0) }) {
            throw Invalid("webhooks.endpoints[\(index)]: unknown setting \"\(unknown)\"")
        }
        let name = map["name"].map { "\($0)" } ?? "endpoint-\(index + 1)"
        guard CollectionName.isWellFormed(name) else { throw Invalid("webhooks.endpoints[\(index)].name must be letters, digits, '_' or '-'") }
        let url = map["url"].map { "\($0)" } ?? ""
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.count <= 2048 else {
            throw Invalid("webhooks.endpoints[\(index)].url must be an http:// or https:// URL")
        }
        let secret = map["secret"].map { "\($0)" } ?? ""
        guard secret.hasPrefix("whsec_"), let key = Data(base64Encoded: String(secret.dropFirst(6))), (16...128).contains(key.count) else {
            throw Invalid("webhooks.endpoints[\(index)].secret must be whsec_ followed by the base64 of 16 to 128 random bytes")
        }
        let events = (map["events"] as? [Any])?.map { "\($0)" } ?? []
        guard !events.isEmpty, events.allSatisfy(isKnownEventType) else {
            throw Invalid("webhooks.endpoints[\(index)].events must list event types such as message.created or messages.created")
        }
        let format = map["format"].map { "\($0)" } ?? "standard"
        guard ["standard", "gorush"].contains(format) else { throw Invalid("webhooks.endpoints[\(index)].format must be standard or gorush") }
        if format == "gorush" && events != ["message.created"] {
            throw Invalid("webhooks.endpoints[\(index)]: a gorush endpoint takes only message.created")
        }
        return WebhookEndpointRecord(name: name, url: url, secret: secret, events: events, format: format, source: source)
    }
}
