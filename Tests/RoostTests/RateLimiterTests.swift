import Foundation
@testable import Roost
import Testing

/// `RateLimiter`'s buckets (refill, refunds, big costs, reloads), its memory
/// bound under a client rotating addresses, `VerifiedTokens`, and `rate_limits:` parsing.
@Suite struct RateLimiterTests {
    static let second: UInt64 = 1_000_000_000

    static func limits(_ writes: RateLimit, callers: Int = 1_000) -> RoostConfig.RateLimits {
        var limits = RoostConfig.RateLimits()
        limits.writes = writes
        limits.callers = callers
        return limits
    }

    @Test func spendsTheBurstThenRefillsAtTheRate() {
        let limiter = RateLimiter(Self.limits(RateLimit(perSecond: 2, burst: 3)))
        let key = RateLimiter.Key(kind: .writes, caller: "a:192.0.2.1")
        let t0: UInt64 = 1_000 * Self.second
        #expect((0..<3).allSatisfy { _ in limiter.spend(key, now: t0) == nil })
        let wait = limiter.spend(key, now: t0)
        #expect(wait != nil && abs(wait! - 0.5) < 1e-9, "one token at 2/s is half a second away")
        #expect(limiter.spend(key, now: t0 + Self.second / 2) == nil)
        #expect(limiter.spend(key, now: t0 + Self.second / 2) != nil)
        // A long pause refills to the burst, never past it.
        let later = t0 + 100 * Self.second
        #expect((0..<3).allSatisfy { _ in limiter.spend(key, now: later) == nil })
        #expect(limiter.spend(key, now: later) != nil)
    }

    @Test func callersAndClassesHaveTheirOwnBuckets() {
        let limiter = RateLimiter(Self.limits(RateLimit(perSecond: 1, burst: 1)))
        let t0: UInt64 = 5 * Self.second
        #expect(limiter.spend(.init(kind: .writes, caller: "u:alice"), now: t0) == nil)
        #expect(limiter.spend(.init(kind: .writes, caller: "u:alice"), now: t0) != nil)
        #expect(limiter.spend(.init(kind: .writes, caller: "u:bob"), now: t0) == nil)
        #expect(limiter.spend(.init(kind: .batches, caller: "u:alice"), now: t0) == nil)
    }

    @Test func aCostAboveTheBurstNeedsAFullBucketAndRefundsGiveBack() {
        var limits = Self.limits(RateLimit(perSecond: 1, burst: 1))
        limits.writeBytes = RateLimit(perSecond: 100, burst: 1_000)
        let limiter = RateLimiter(limits)
        let key = RateLimiter.Key(kind: .writeBytes, caller: "u:alice")
        let t0: UInt64 = 7 * Self.second
        #expect(limiter.spend(key, cost: 5_000, now: t0) == nil, "a full bucket lets one oversized body through")
        let wait = limiter.spend(key, cost: 5_000, now: t0)
        #expect(wait != nil && abs(wait! - 10) < 1e-9, "then it waits for a full bucket again")
        limiter.refund(key, cost: 400)
        #expect(limiter.spend(key, cost: 400, now: t0) == nil)
    }

    @Test func offClassesAreFreeAndReloadsApply() {
        let limiter = RateLimiter(Self.limits(RateLimit(perSecond: 0, burst: 0)))
        let key = RateLimiter.Key(kind: .writes, caller: "a:192.0.2.9")
        let t0: UInt64 = 9 * Self.second
        #expect((0..<10_000).allSatisfy { _ in limiter.spend(key, now: t0) == nil })
        limiter.configure(Self.limits(RateLimit(perSecond: 1, burst: 2)))
        #expect(limiter.spend(key, now: t0) == nil && limiter.spend(key, now: t0) == nil)
        #expect(limiter.spend(key, now: t0) != nil)
    }

    @Test func rotatingCallersCannotGrowTheTables() {
        let limiter = RateLimiter(Self.limits(RateLimit(perSecond: 1, burst: 5), callers: 1_000))
        let t0: UInt64 = 11 * Self.second
        for i in 0..<200_000 {
            _ = limiter.spend(.init(kind: .writes, caller: "a:10.\(i >> 16).\((i >> 8) & 255).\(i & 255)"), now: t0 + UInt64(i))
        }
        #expect(limiter.count <= 1_000, "\(limiter.count) buckets for a bound of 1000")
        // A caller that keeps spending still meets its limit while the table churns.
        let key = RateLimiter.Key(kind: .writes, caller: "u:steady")
        #expect((0..<5).allSatisfy { _ in limiter.spend(key, now: t0) == nil })
        #expect(limiter.spend(key, now: t0) != nil)
    }

    @Test func verifiedTokensExpireAndAreBounded() {
        let tokens = VerifiedTokens(capacity: 1_000)
        let t0: UInt64 = 13 * Self.second
        tokens.remember("token-a", as: .user("alice"), now: t0)
        tokens.remember("token-admin", as: .admin, now: t0)
        #expect(tokens.identity(of: "token-a", now: t0 + 1) == .user("alice"))
        #expect(tokens.identity(of: "token-admin", now: t0 + 1) == .admin)
        #expect(tokens.identity(of: "made-up", now: t0 + 1) == nil)
        #expect(tokens.identity(of: "token-a", now: t0 + VerifiedTokens.ttl + 1) == nil)
        tokens.forget("token-admin")
        #expect(tokens.identity(of: "token-admin", now: t0 + 1) == nil)
        for i in 0..<100_000 { tokens.remember("t\(i)", as: .user("u\(i)"), now: t0) }
        #expect(tokens.identity(of: "t99999", now: t0 + 1) == .user("u99999"))
    }

    @Test func parsesRateLimits() throws {
        let config = try RoostConfig.loaded("""
            rate_limits:
              writes: {per_second: 5, burst: 20}
              write_bytes: {per_hour: 3600000}
              signups: {per_minute: 0}
              callers: 5000
            """)
        #expect(config.rateLimits.writes == RateLimit(perSecond: 5, burst: 20))
        #expect(config.rateLimits.writeBytes == RateLimit(perSecond: 1000, burst: 3_600_000), "burst defaults to one period")
        #expect(config.rateLimits.signups.isOff)
        #expect(config.rateLimits.batches == RoostConfig.RateLimits().batches, "unnamed classes keep their defaults")
        #expect(config.rateLimits.callers == 5000)
        let off = try RoostConfig.loaded("rate_limits: off")
        #expect(RateClass.allCases.allSatisfy { off.rateLimits[$0].isOff })
        for bad in ["rate_limits: {writes: {per_second: 1, per_hour: 2}}", "rate_limits: {writes: {}}",
                    "rate_limits: {uploads: {per_second: 1, burst: 0}}", "rate_limits: {reads: {per_second: 1}}",
                    "rate_limits: {callers: 5}", "rate_limits: [1]"] {
            #expect(throws: RoostConfig.Invalid.self, "\(bad)") { try RoostConfig.loaded(bad) }
        }
    }

    @Test func defaultsAreOnAndReloadsReportChanges() throws {
        let defaults = RoostConfig.RateLimits()
        #expect(RateClass.allCases.allSatisfy { !defaults[$0].isOff })
        let settings = ReloadableSettings(RoostConfig())
        let changed = try RoostConfig.loaded("rate_limits: {writes: {per_second: 1}}")
        let lines = settings.apply(changed)
        #expect(lines.contains { $0.hasPrefix("rate_limits.writes:") }, "\(lines)")
    }
}
