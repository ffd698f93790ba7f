/// When a job runs: every fixed interval (`"30s"`, `"5m"`, `"1h"`, `"1d"`) or
/// on a five-field cron expression in UTC (`"0 3 * * *"`: minute, hour,
/// day of month, month, day of week; `*`, `a`, `a-b`, `*/n`, `a-b/n`, lists).
public struct JobSchedule: Sendable, CustomStringConvertible {
    enum Rule: Sendable {
        case every(seconds: Int64)
        case cron([Set<Int>])
    }

    let rule: Rule
    public let description: String

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    static let ranges: [ClosedRange<Int>] = [0...59, 0...23, 1...31, 1...12, 0...6]

    public init(kind: ScriptRegistration.Kind, text: String) throws {
        description = text
        if kind == .every {
            let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
            guard let unit = text.last.flatMap({ units[$0] }), let n = Int64(text.dropLast()), n > 0, n * unit <= 366 * 86_400 else {
                throw Invalid(description: "\"\(text)\" is not an interval like 30s, 5m, 1h or 1d")
            }
            guard n * unit >= 1 else { throw Invalid(description: "an interval is at least 1s") }
            rule = .every(seconds: n * unit)
            return
        }
        let fields = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard fields.count == 5 else { throw Invalid(description: "\"\(text)\" is not a cron expression of five fields (minute hour day month weekday)") }
        rule = .cron(try zip(fields, Self.ranges).map { try Self.field($0, $1, text) })
    }

    private static func field(_ text: String, _ range: ClosedRange<Int>, _ whole: String) throws -> Set<Int> {
        var values = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2 else { throw Invalid(description: "\"\(whole)\": bad field \"\(text)\"") }
            let step = pieces.count == 2 ? Int(pieces[1]) : 1
            var low = range.lowerBound, high = range.upperBound
            if pieces[0] != "*" {
                let bounds = pieces[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
                guard (1...2).contains(bounds.count), bounds.allSatisfy({ $0 != nil }) else {
                    throw Invalid(description: "\"\(whole)\": bad field \"\(text)\"")
                }
                low = bounds[0]!
                high = bounds.count == 2 ? bounds[1]! : (pieces.count == 2 ? range.upperBound : low)
            }
            guard let step, step > 0, range.contains(low), range.contains(high), low <= high else {
                throw Invalid(description: "\"\(whole)\": field \"\(text)\" is outside \(range.lowerBound)-\(range.upperBound)")
            }
            values.formUnion(stride(from: low, through: high, by: step))
        }
        return values
    }

    /// The first time this schedule fires strictly after `time` (seconds since 1970, UTC).
    public func next(after time: Int64) -> Int64 {
        switch rule {
        case .every(let seconds):
            return (time / seconds + 1) * seconds
        case .cron:
            var t = (time / 60 + 1) * 60
            for _ in 0..<(366 * 24 * 60) {
                if fires(at: t) { return t }
                t += 60
            }
            return Int64.max
        }
    }

    /// The latest time this schedule fired at or before `time` (within a year), or nil.
    public func latest(atOrBefore time: Int64) -> Int64? {
        switch rule {
        case .every(let seconds):
            return time / seconds * seconds
        case .cron:
            var t = time / 60 * 60
            for _ in 0..<(366 * 24 * 60) {
                if fires(at: t) { return t }
                t -= 60
            }
            return nil
        }
    }

    /// Whether a cron schedule fires at the minute starting at `t`.
    func fires(at t: Int64) -> Bool {
        guard case .cron(let fields) = rule else { return t % 60 == 0 }
        let (month, day, weekday, hour, minute) = Self.utc(t)
        return fields[0].contains(minute) && fields[1].contains(hour) && fields[2].contains(day)
            && fields[3].contains(month) && fields[4].contains(weekday)
    }

    /// Month (1-12), day (1-31), weekday (0 = Sunday), hour and minute of `t` in UTC (civil-from-days).
    static func utc(_ t: Int64) -> (Int, Int, Int, Int, Int) {
        let days = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let secs = t - days * 86_400
        let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (month, day, weekday, Int(secs / 3600), Int(secs % 3600 / 60))
    }
}
