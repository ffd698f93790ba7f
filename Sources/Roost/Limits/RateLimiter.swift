import Foundation

/// Token buckets per (class, caller), shared by every event loop: one check
/// is a lock on one of `stripes` tables (picked by the key's hash), a
/// dictionary look-up and a little arithmetic, with no allocation for a
/// caller already known. Loops share the tables, so a caller's budget is
/// the same whatever loop its connection landed on.
///
/// Memory is bounded: past `callers / stripes` buckets in a table, the full
/// ones are dropped (a full bucket is the same as none); if most are still
/// in use, arbitrary ones are dropped down to half. A client rotating
/// addresses therefore costs a bounded table, and at worst resets some
/// buckets of its own kind. The limits may change at run time (SIGHUP).
final class RateLimiter: @unchecked Sendable {
    /// A caller: its account (`u:<id>`) or its client address (`a:<address>`).
    struct Key: Hashable, Sendable {
        let kind: RateClass
        let caller: String
    }

    private struct Bucket {
        var tokens: Double
        var stamp: UInt64
    }

    private final class Stripe: @unchecked Sendable {
        let lock = NSLock()
        var buckets: [Key: Bucket] = [:]
        var limits: RoostConfig.RateLimits
        var capacity: Int

        init(_ limits: RoostConfig.RateLimits, capacity: Int) {
            self.limits = limits
            self.capacity = capacity
        }
    }

    static let stripeCount = 16
    private let stripes: [Stripe]

    init(_ limits: RoostConfig.RateLimits) {
        stripes = (0..<Self.stripeCount).map { _ in Stripe(limits, capacity: Self.capacity(limits)) }
    }

    private static func capacity(_ limits: RoostConfig.RateLimits) -> Int { max(16, limits.callers / stripeCount) }

    /// Installs new limits (a SIGHUP reload); buckets keep their tokens, capped by the new burst.
    func configure(_ limits: RoostConfig.RateLimits) {
        for stripe in stripes {
            stripe.lock.lock()
            stripe.limits = limits
            stripe.capacity = Self.capacity(limits)
            stripe.lock.unlock()
        }
    }

    /// Spends `cost` from `key`'s bucket: nil when allowed (and spent), else
    /// the seconds until it would be allowed (nothing spent). A cost above
    /// the burst needs a full bucket, so one large request is never refused forever.
    func spend(_ key: Key, cost: Double = 1, now: UInt64 = RateLimiter.now()) -> Double? {
        let stripe = stripes[Int(UInt(bitPattern: key.hashValue) % UInt(Self.stripeCount))]
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        let limit = stripe.limits[key.kind]
        guard !limit.isOff else { return nil }
        let need = min(cost, limit.burst)
        var bucket: Bucket
        if let found = stripe.buckets[key] {
            bucket = found
            let elapsed = Double(now &- bucket.stamp) / 1e9
            bucket.tokens = min(limit.burst, bucket.tokens + elapsed * limit.perSecond)
            bucket.stamp = now
        } else {
            bucket = Bucket(tokens: limit.burst, stamp: now)
            if stripe.buckets.count >= stripe.capacity { Self.evict(stripe, now: now) }
        }
        guard bucket.tokens >= need else {
            stripe.buckets[key] = bucket
            return (need - bucket.tokens) / limit.perSecond
        }
        bucket.tokens -= need
        stripe.buckets[key] = bucket
        return nil
    }

    /// Gives `cost` back to `key` (a request refused by a later budget spends nothing).
    func refund(_ key: Key, cost: Double = 1) {
        let stripe = stripes[Int(UInt(bitPattern: key.hashValue) % UInt(Self.stripeCount))]
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        let limit = stripe.limits[key.kind]
        guard var bucket = stripe.buckets[key] else { return }
        bucket.tokens = min(limit.burst, bucket.tokens + min(cost, limit.burst))
        stripe.buckets[key] = bucket
    }

    /// Buckets held now, over every table (tests and the memory bound).
    var count: Int {
        stripes.reduce(0) { total, stripe in
            stripe.lock.lock()
            defer { stripe.lock.unlock() }
            return total + stripe.buckets.count
        }
    }

    /// Under the stripe's lock: drops full buckets, then arbitrary ones if the table is still mostly in use.
    private static func evict(_ stripe: Stripe, now: UInt64) {
        let limits = stripe.limits
        stripe.buckets = stripe.buckets.filter { key, bucket in
            let limit = limits[key.kind]
            guard !limit.isOff else { return false }
            return bucket.tokens + Double(now &- bucket.stamp) / 1e9 * limit.perSecond < limit.burst
        }
        guard stripe.buckets.count > stripe.capacity * 3 / 4 else { return }
        let drop = stripe.buckets.count - stripe.capacity / 2
        for key in Array(stripe.buckets.keys.prefix(drop)) { stripe.buckets.removeValue(forKey: key) }
    }

    /// Monotonic nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
