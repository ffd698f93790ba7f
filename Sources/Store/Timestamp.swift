import Foundation

/// ISO 8601 UTC timestamps with milliseconds, e.g. `2026-11-21T21:33:12.123Z`.
public enum Timestamp {
    public static func now() -> String { format(Date()) }

    /// Now, or one millisecond after `previous` when the clock has not passed
    /// it: an entity's `_updatedAt` (its ETag) changes with every write.
    public static func after(_ previous: String?) -> String {
        let now = Self.now()
        guard let previous, previous >= now, let last = milliseconds(previous) else { return now }
        return format(Date(timeIntervalSince1970: Double(last + 1) / 1000))
    }

    /// Milliseconds since 1970 of a timestamp in this format, or nil.
    public static func milliseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 24, b[4] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"), b[19] == UInt8(ascii: "."), b[23] == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ from: Int, _ width: Int) -> Int? {
            var v = 0
            for i in from..<(from + width) {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2), let ms = number(20, 3) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Int64(timegm(&parts)) * 1000 + Int64(ms)
    }

    public static func format(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let wholeSeconds = ms.floorDivided(by: 1000)
        var seconds = time_t(wholeSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Written digit by digit into 24 bytes: this runs for every stored document.
        return String(unsafeUninitializedCapacity: 24) { out in
            var at = 0
            func put(_ value: Int, _ width: Int) {
                var v = value
                for i in stride(from: width - 1, through: 0, by: -1) {
                    out[at + i] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                }
                at += width
            }
            func put(_ separator: Unicode.Scalar) { out[at] = UInt8(ascii: separator); at += 1 }
            put(Int(parts.tm_year) + 1900, 4); put("-"); put(Int(parts.tm_mon) + 1, 2); put("-"); put(Int(parts.tm_mday), 2)
            put("T"); put(Int(parts.tm_hour), 2); put(":"); put(Int(parts.tm_min), 2); put(":"); put(Int(parts.tm_sec), 2)
            put("."); put(Int(ms - wholeSeconds * 1000), 3); put("Z")
            return at
        }
    }
}

extension Int64 {
    /// Division rounding toward minus infinity (dates before 1970 stay on the right second).
    func floorDivided(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
