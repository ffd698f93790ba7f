/// When to try a failed delivery again. By default the Standard Webhooks
/// schedule: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h;
/// after the last attempt the delivery is dead-lettered. Each delay gets
/// ±20 % jitter, and a receiver's `Retry-After` lengthens (never shortens) it.
public struct RetrySchedule: Sendable, Equatable {
    /// Seconds to wait after the 1st, 2nd, … failed attempt.
    public var delays: [Double]

    public static let standard = RetrySchedule(delays: [5, 300, 1800, 7200, 18000, 36000, 36000])

    public init(delays: [Double]) { self.delays = delays }

    /// Attempts in all, the first included.
    public var maxAttempts: Int { delays.count + 1 }

    /// The delay in milliseconds after `attempt` (1-based) failed, or nil when it was the last.
    public func delayMilliseconds(afterAttempt attempt: Int, retryAfter: Int?, random: Double = Double.random(in: 0..<1)) -> Int64? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        let base = delays[attempt - 1] * (0.8 + 0.4 * random)
        let honoured = max(base, Double(min(retryAfter ?? 0, 86_400)))
        return Int64((honoured * 1000).rounded())
    }
}
