import Foundation

/// ISO 8601 UTC timestamps with milliseconds, e.g. `2026-11-21T21:33:12.123Z`.
public enum Timestamp {
    public static func now() -> String { format(Date()) }

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
