import Foundation

extension RoostConfig {
    /// Backups the daemon takes on its own (see `BackupService`).
    public struct Backups: Sendable, Equatable {
        /// Where backups go; nil: no scheduled backups and `POST /admin/backups` answers 409.
        public var dir: String?
        /// Seconds between scheduled backups; nil: only on request.
        public var every: Int?
        /// Complete backups to keep (the oldest beyond go); 0 keeps all.
        public var keep = 7
        /// Bytes per second a backup may read and write; nil: no limit.
        public var maxRate: Int?
    }

    mutating func applyBackups(_ value: Any) throws {
        guard let map = value as? [String: Any] else { throw Invalid("backups must be a mapping") }
        for (key, v) in map {
            switch key {
            case "dir": backups.dir = "\(v)"
            case "every":
                guard let seconds = Self.seconds("\(v)"), seconds >= 1 else {
                    throw Invalid("backups.every must be a duration such as 24h, 30m, 90s or 7d")
                }
                backups.every = seconds
            case "keep":
                guard let n = (v as? Int) ?? Int("\(v)"), (0...10_000).contains(n) else {
                    throw Invalid("backups.keep must be a whole number from 0 (keep all) to 10000")
                }
                backups.keep = n
            case "max_rate":
                guard let rate = Self.bytes("\(v)"), rate >= 1024 else { throw Invalid("backups.max_rate must be bytes per second, such as 50M (at least 1K)") }
                backups.maxRate = rate
            default:
                throw Invalid("backups: unknown setting \"\(key)\" (use dir, every, keep, max_rate)")
            }
        }
    }

    /// `90`, `90s`, `30m`, `24h`, `7d` → seconds.
    static func seconds(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces)
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let last = t.last, let unit = units[last] { return Int(t.dropLast()).map { $0 * unit } }
        return Int(t)
    }

    /// `1048576`, `512K`, `50M`, `1G` → bytes.
    public static func bytes(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = t.last, let unit = units[last] { return Int(t.dropLast()).map { $0 * unit } }
        return Int(t)
    }
}
