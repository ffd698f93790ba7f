import Foundation

/// What a caller may spend, per class of request: a token bucket that holds
/// at most `burst` and refills at `perSecond`. `perSecond == 0` turns it off.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var perSecond: Double
    public var burst: Double

    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }

    public var isOff: Bool { perSecond <= 0 || burst <= 0 }

    public var description: String {
        isOff ? "off" : "\(Self.number(perSecond))/s burst \(Self.number(burst))"
    }

    static func number(_ x: Double) -> String { x == x.rounded() ? String(Int64(x)) : String(format: "%g", x) }
}

/// The classes of request a caller's budgets are kept for (`rate_limits:`).
/// `writeBytes` is charged with the body bytes of every write, batch and upload;
/// `pushRecipients` with the recipients a caller's messages notify by push (the messaging hook).
public enum RateClass: Int, Sendable, CaseIterable {
    case writes, writeBytes, batches, uploads, signups, liveStreams, pushRecipients

    /// The YAML key and the `class` label of `roost_rate_limited_total`.
    public var name: String {
        switch self {
        case .writes: return "writes"
        case .writeBytes: return "write_bytes"
        case .batches: return "batches"
        case .uploads: return "uploads"
        case .signups: return "signups"
        case .liveStreams: return "live_streams"
        case .pushRecipients: return "push_recipients"
        }
    }

    /// Whether a request of this class also spends its body's bytes from `writeBytes`.
    var spendsBytes: Bool { self == .writes || self == .batches || self == .uploads }
}

extension RoostConfig {
    /// `rate_limits:` budgets per caller (a signed-in caller's account, else
    /// its client address). The defaults are far above what an app's user
    /// does, and bound what one abusive caller can make the daemon do.
    public struct RateLimits: Sendable, Equatable {
        /// Collection writes (POST, PUT, PATCH, DELETE; profile updates and file deletes too):
        /// 50 a second, 1,000 at once (an offline outbox flushing).
        public var writes = RateLimit(perSecond: 50, burst: 1000)
        /// Body bytes of writes, batches and uploads: 1 GiB an hour, 256 MiB at once.
        public var writeBytes = RateLimit(perSecond: Double(1 << 30) / 3600, burst: Double(256 << 20))
        /// `POST /_batch` (each up to 100 writes): 10 a second, 200 at once.
        public var batches = RateLimit(perSecond: 10, burst: 200)
        /// `POST /files`: 10 a second, 300 at once.
        public var uploads = RateLimit(perSecond: 10, burst: 300)
        /// `POST /users` (per address: sign-ups carry no session): 300 an hour, 100 at once.
        public var signups = RateLimit(perSecond: 300.0 / 3600, burst: 100)
        /// Live stream opens (`/events`, `/:collection/_live`): 2 a second, 100 at once.
        public var liveStreams = RateLimit(perSecond: 2, burst: 100)
        /// Recipients a caller's messages notify by push: 20 a second, 1,000 at once. Without
        /// it one caller (50 messages a second, each to 100 recipients with 20 devices) could
        /// enqueue more than any node delivers and hold everyone's notifications behind its
        /// own (docs/PUSH.md, Pacing). Counted per recipient, not per device, so the budget
        /// never tells a sender how many devices someone has.
        public var pushRecipients = RateLimit(perSecond: 20, burst: 1000)
        /// Callers' buckets kept at most (a full bucket is dropped first, being the same as none).
        public var callers = 100_000

        public init() {}

        public subscript(_ kind: RateClass) -> RateLimit {
            get {
                switch kind {
                case .writes: return writes
                case .writeBytes: return writeBytes
                case .batches: return batches
                case .uploads: return uploads
                case .signups: return signups
                case .liveStreams: return liveStreams
                case .pushRecipients: return pushRecipients
                }
            }
            set {
                switch kind {
                case .writes: writes = newValue
                case .writeBytes: writeBytes = newValue
                case .batches: batches = newValue
                case .uploads: uploads = newValue
                case .signups: signups = newValue
                case .liveStreams: liveStreams = newValue
                case .pushRecipients: pushRecipients = newValue
                }
            }
        }

        /// One line per class that differs from `other`, for the reload log.
        func changes(from old: RateLimits) -> [String] {
            var lines = RateClass.allCases.filter { old[$0] != self[$0] }
                .map { "rate_limits.\($0.name): \(old[$0]) → \(self[$0])" }
            if old.callers != callers { lines.append("rate_limits.callers: \(old.callers) → \(callers)") }
            return lines
        }
    }

    /// `rate_limits: {writes: {per_second: 50, burst: 1000}, write_bytes: {per_hour: 1073741824}, …, callers: 100000}`.
    /// Each class takes one of `per_second`, `per_minute`, `per_hour` (0: off)
    /// and an optional `burst` (default: one period's amount).
    /// `rate_limits: off` turns every class off (a load generator that is one caller).
    mutating func applyRateLimits(_ value: Any) throws {
        if (value as? Bool) == false || "\(value)" == "off" {
            for kind in RateClass.allCases { rateLimits[kind] = RateLimit(perSecond: 0, burst: 0) }
            return
        }
        guard let map = value as? [String: Any] else { throw Invalid("rate_limits must be off or a mapping of classes") }
        let names = RateClass.allCases.map(\.name)
        for (key, spec) in map {
            if key == "callers" {
                guard let n = (spec as? Int) ?? Int("\(spec)"), (1_000...10_000_000).contains(n) else {
                    throw Invalid("rate_limits.callers must be a whole number from 1000 to 10000000")
                }
                rateLimits.callers = n
                continue
            }
            guard let kind = RateClass.allCases.first(where: { $0.name == key }) else {
                throw Invalid("rate_limits: unknown class \"\(key)\" (use \(names.joined(separator: ", ")), callers)")
            }
            rateLimits[kind] = try Self.rateLimit(key, spec)
        }
    }

    static func rateLimit(_ key: String, _ spec: Any) throws -> RateLimit {
        let periods: [(String, Double)] = [("per_second", 1), ("per_minute", 60), ("per_hour", 3600)]
        let form = "rate_limits.\(key) must be a mapping with one of per_second, per_minute, per_hour (0: off) and optionally burst"
        guard let map = spec as? [String: Any] else { throw Invalid(form) }
        func number(_ name: String) throws -> Double? {
            guard let raw = map[name] else { return nil }
            guard let x = (raw as? Double) ?? (raw as? Int).map(Double.init) ?? Double("\(raw)"), x >= 0, x <= 1e15 else {
                throw Invalid("rate_limits.\(key).\(name) must be a number from 0 to 1e15")
            }
            return x
        }
        if let unknown = map.keys.first(where: { $0 != "burst" && !periods.map(\.0).contains($0) }) {
            throw Invalid("rate_limits.\(key): unknown setting \"\(unknown)\" (\(form))")
        }
        let given = try periods.compactMap { name, seconds in try number(name).map { (amount: $0, seconds: seconds) } }
        guard given.count == 1, let period = given.first else { throw Invalid(form) }
        if period.amount == 0 { return RateLimit(perSecond: 0, burst: 0) }
        let burst = try number("burst") ?? max(1, period.amount)
        guard burst >= 1 else { throw Invalid("rate_limits.\(key).burst must be at least 1") }
        return RateLimit(perSecond: period.amount / period.seconds, burst: burst)
    }
}
