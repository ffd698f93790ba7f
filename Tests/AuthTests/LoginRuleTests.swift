import Auth
import Testing

/// The throttle's counting rules, with the clock passed in.
@Suite struct LoginRuleTests {
    static let block = LoginRule(.block(allowed: 5, maxBlock: 900), window: 900)
    static let slow = LoginRule(.slow(free: 20, interval: 15), window: 900)

    /// Attempts at the given times (each counted only if not refused): which were refused.
    static func refused(_ rule: LoginRule, at times: [Int64]) -> [Bool] {
        var bucket: LoginBucket?
        return times.map { now in
            if rule.wait(bucket, now: now) != nil { return true }
            bucket = rule.reserve(bucket, now: now)
            return false
        }
    }

    @Test(arguments: [
        // Five in a burst pass; the fifth blocks for 2 s.
        (Array(repeating: Int64(0), count: 7), [false, false, false, false, false, true, true]),
        // After the 2 s block, one more, which blocks for 4 s.
        ([0, 0, 0, 0, 0, 2, 3, 5, 6], [false, false, false, false, false, false, true, true, false]),
        // A new window starts afresh.
        ([0, 0, 0, 0, 0, 900, 900, 900, 900, 900], [false, false, false, false, false, false, false, false, false, false]),
    ] as [([Int64], [Bool])])
    func blocking(times: [Int64], expected: [Bool]) {
        #expect(Self.refused(Self.block, at: times) == expected)
    }

    @Test func slowingAllowsOnePerInterval() {
        let burst = Self.refused(Self.slow, at: Array(repeating: 0, count: 23))
        #expect(burst == Array(repeating: false, count: 21) + [true, true])
        #expect(Self.refused(Self.slow, at: Array(repeating: 0, count: 21) + [14, 15, 15, 30]).suffix(4) == [true, false, true, false])
    }

    @Test func waitIsTheRestOfTheBlock() {
        let b = LoginBucket(failures: 9, windowStart: 0, blockedUntil: 100)
        #expect(Self.block.wait(b, now: 40) == 60)
        #expect(Self.block.wait(b, now: 100) == nil)
        #expect(Self.block.wait(nil, now: 0) == nil)
    }

    @Test(arguments: [
        // (bucket before, after a refund)
        (LoginBucket(failures: 5, windowStart: 0, blockedUntil: 2), LoginBucket(failures: 4, windowStart: 0, blockedUntil: 0)),
        (LoginBucket(failures: 7, windowStart: 0, blockedUntil: 8), LoginBucket(failures: 6, windowStart: 0, blockedUntil: 8)),
        (LoginBucket(failures: 0, windowStart: 0, blockedUntil: 0), LoginBucket(failures: 0, windowStart: 0, blockedUntil: 0)),
    ] as [(LoginBucket, LoginBucket)])
    func refundLiftsABlockNoLongerReached(before: LoginBucket, after: LoginBucket) {
        #expect(Self.block.refund(before) == after)
    }

    @Test func blocksStopDoublingAtTheMaximum() {
        var b: LoginBucket? = LoginBucket(failures: 40, windowStart: 0, blockedUntil: 0)
        b = Self.block.reserve(b, now: 10)
        #expect(b?.blockedUntil == Int64(10 + 900))
    }
}
