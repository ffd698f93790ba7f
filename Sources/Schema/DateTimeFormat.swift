/// RFC 3339 `date-time`, `full-date` and `full-time`, ASCII digits only, with
/// real month lengths and leap seconds only at 23:59:60 UTC.
enum DateTimeFormat {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    static func isDateTime(_ s: Bytes) -> Bool {
        guard s.count > 11, s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: "t") else { return false }
        return isDate(Bytes(rebasing: s[0..<10])) && isTime(Bytes(rebasing: s[11...]))
    }

    static func isDate(_ s: Bytes) -> Bool {
        guard s.count == 10, s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"),
              let year = number(s, 0, 4), let month = number(s, 5, 2), let day = number(s, 8, 2) else { return false }
        guard (1...12).contains(month), day >= 1 else { return false }
        return day <= daysIn(month: month, year: year)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `HH:MM:SS[.fraction](Z|±HH:MM)`.
    static func isTime(_ s: Bytes) -> Bool {
        guard s.count >= 9, s[2] == UInt8(ascii: ":"), s[5] == UInt8(ascii: ":"),
              let hour = number(s, 0, 2), let minute = number(s, 3, 2), let second = number(s, 6, 2),
              hour <= 23, minute <= 59, second <= 60 else { return false }
        var i = 8
        if s[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < s.count, isDigit(s[i]) { i += 1 }
            guard i > start else { return false }
        }
        guard i < s.count else { return false }
        var offsetMinutes = 0
        switch s[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == s.count else { return false }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard i + 6 == s.count, s[i + 3] == UInt8(ascii: ":"),
                  let oh = number(s, i + 1, 2), let om = number(s, i + 4, 2), oh <= 23, om <= 59 else { return false }
            offsetMinutes = (oh * 60 + om) * (s[i] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return false
        }
        if second == 60 {
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// `count` ASCII digits at `start` as a number.
    private static func number(_ s: Bytes, _ start: Int, _ count: Int) -> Int? {
        guard start + count <= s.count else { return nil }
        var n = 0
        for b in s[start..<start + count] {
            guard isDigit(b) else { return nil }
            n = n * 10 + Int(b - 0x30)
        }
        return n
    }
}
