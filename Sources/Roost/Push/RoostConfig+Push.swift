import Foundation

extension RoostConfig {
    /// `push:` — direct delivery to APNs and FCM (docs/PUSH.md). Only paths
    /// and names are in the YAML: the APNs key and the FCM service account
    /// are read from files (relative paths under systemd's
    /// `$CREDENTIALS_DIRECTORY`) or from `ROOST_APNS_KEY` /
    /// `ROOST_FCM_SERVICE_ACCOUNT`, at start-up.
    public struct Push: Sendable, Equatable {
        public struct APNs: Sendable, Equatable {
            public var keyFile: String?
            public var keyID = ""
            public var teamID = ""
            public var topic = ""
            public var url = "https://api.push.apple.com"
            public var sandboxURL = "https://api.sandbox.push.apple.com"
            /// Seconds a provider token is reused (1200 to 3600).
            public var tokenLifetime = 3000
        }

        public struct FCM: Sendable, Equatable {
            public var serviceAccountFile: String?
            public var url = "https://fcm.googleapis.com"
            /// Overrides the service account's `token_uri`.
            public var tokenURL: String?
        }

        public enum AlertText: String, Sendable, CaseIterable { case full, generic }

        public var apns: APNs?
        public var fcm: FCM?
        /// `full`: the sender's name and the message text; `generic`: `genericText` only.
        public var alertText = AlertText.full
        public var genericText = "New message"
        /// Seconds between two silent sync pushes to one device (changes in between are coalesced).
        public var syncInterval: Double = 30
        /// Days after which a token its app has not registered again is dropped (0: never; fractions allowed).
        public var tokenMaxAgeDays: Double = 270
        public var retrySchedule: [Double] = [1, 5, 30, 120, 600, 1800, 3600, 7200]
        /// Notifications a second one node sends at most (0: as fast as the providers answer).
        /// Pushes are background work: a broadcast paced at this rate leaves the requests their CPU.
        public var maxRate: Double = 6_000
        /// Seconds a batch of requests may take.
        public var timeout: Double = 10
        /// A PEM bundle to trust for the providers instead of the system's CAs (stand-ins).
        public var caFile: String?

        /// One line for `roostd check-config` (where the credentials come from, never their text), or nil when off.
        public var summary: String? {
            guard apns != nil || fcm != nil else { return nil }
            var parts: [String] = []
            if let a = apns { parts.append("apns topic \(a.topic), key \(a.keyFile.map { "file \($0)" } ?? "ROOST_APNS_KEY"), \(a.url)") }
            if let f = fcm { parts.append("fcm \(f.serviceAccountFile.map { "file \($0)" } ?? "ROOST_FCM_SERVICE_ACCOUNT"), \(f.url)") }
            parts.append("alert_text \(alertText.rawValue), sync_interval \(syncInterval) s, token_max_age_days \(tokenMaxAgeDays), max_rate \(maxRate > 0 ? "\(Int(maxRate))/s" : "none")")
            return "push: " + parts.joined(separator: "; ")
        }
    }

    mutating func applyPush(_ value: Any) throws {
        guard let map = value as? [String: Any] else { throw Invalid("push must be a mapping") }
        func number(_ key: String, _ v: Any, _ range: ClosedRange<Double>) throws -> Double {
            guard let d = (v as? Double) ?? (v as? Int).map(Double.init), range.contains(d) else {
                throw Invalid("push.\(key) must be a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return d
        }
        for (key, v) in map {
            switch key {
            case "apns": push.apns = try Self.apns(v)
            case "fcm": push.fcm = try Self.fcm(v)
            case "alert_text":
                guard let t = Push.AlertText(rawValue: "\(v)") else { throw Invalid("push.alert_text must be full or generic") }
                push.alertText = t
            case "generic_text":
                let text = "\(v)"
                guard (1...200).contains(text.count) else { throw Invalid("push.generic_text must be 1 to 200 characters") }
                push.genericText = text
            case "sync_interval": push.syncInterval = try number(key, v, 0...86_400)
            case "token_max_age_days": push.tokenMaxAgeDays = try number(key, v, 0...3650)
            case "timeout": push.timeout = try number(key, v, 0.1...300)
            case "max_rate": push.maxRate = try number(key, v, 0...1_000_000)
            case "ca_file": push.caFile = "\(v)"
            case "retry_schedule":
                let items = (v as? [Any]) ?? []
                let delays = items.compactMap { ($0 as? Double) ?? ($0 as? Int).map(Double.init) }
                guard delays.count == items.count, delays.count <= 50, delays.allSatisfy({ $0 >= 0 && $0 <= 7 * 86_400 }) else {
                    throw Invalid("push.retry_schedule must be a list of at most 50 delays in seconds (0 to 604800)")
                }
                push.retrySchedule = delays
            default:
                throw Invalid("push: unknown setting \"\(key)\" (use apns, fcm, alert_text, generic_text, sync_interval, token_max_age_days, retry_schedule, timeout, max_rate, ca_file)")
            }
        }
    }

    static func apns(_ value: Any) throws -> Push.APNs {
        guard let map = value as? [String: Any] else { throw Invalid("push.apns must be a mapping") }
        var a = Push.APNs()
        for (key, v) in map {
            let text = "\(v)"
            switch key {
            case "key_file": a.keyFile = text
            case "key_id": a.keyID = text
            case "team_id": a.teamID = text
            case "topic": a.topic = text
            case "url", "sandbox_url":
                guard text.hasPrefix("https://") || text.hasPrefix("http://") else { throw Invalid("push.apns.\(key) must be an https:// URL") }
                if key == "url" { a.url = text } else { a.sandboxURL = text }
            case "token_lifetime":
                guard let n = v as? Int, (1200...3600).contains(n) else { throw Invalid("push.apns.token_lifetime must be seconds from 1200 to 3600") }
                a.tokenLifetime = n
            case "key":
                throw Invalid("push.apns.key: the key never goes in the YAML; name a file (key_file) or set ROOST_APNS_KEY")
            default:
                throw Invalid("push.apns: unknown setting \"\(key)\" (use key_file, key_id, team_id, topic, url, sandbox_url, token_lifetime)")
            }
        }
        guard !a.keyID.isEmpty, !a.teamID.isEmpty, !a.topic.isEmpty else { throw Invalid("push.apns needs key_id, team_id and topic") }
        return a
    }

    static func fcm(_ value: Any) throws -> Push.FCM {
        guard let map = value as? [String: Any] else { throw Invalid("push.fcm must be a mapping") }
        var f = Push.FCM()
        for (key, v) in map {
            let text = "\(v)"
            switch key {
            case "service_account_file": f.serviceAccountFile = text
            case "url", "token_url":
                guard text.hasPrefix("https://") || text.hasPrefix("http://") else { throw Invalid("push.fcm.\(key) must be an https:// URL") }
                if key == "url" { f.url = text } else { f.tokenURL = text }
            case "service_account", "private_key":
                throw Invalid("push.fcm.\(key): credentials never go in the YAML; name a file (service_account_file) or set ROOST_FCM_SERVICE_ACCOUNT")
            default:
                throw Invalid("push.fcm: unknown setting \"\(key)\" (use service_account_file, url, token_url)")
            }
        }
        return f
    }
}
