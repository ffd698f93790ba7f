/// One counter of the log-in throttle, as stored: attempts counted in the
/// current window (those still being checked included) and a block.
/// Times are Unix seconds.
public struct LoginBucket: Sendable, Equatable {
    public var failures: Int64
    public var windowStart: Int64
    public var blockedUntil: Int64

    public init(failures: Int64, windowStart: Int64, blockedUntil: Int64) {
        self.failures = failures
        self.windowStart = windowStart
        self.blockedUntil = blockedUntil
    }
}

/// How one bucket of the log-in throttle counts. A pure state machine with
/// the clock passed in, so it is tested without a daemon.
///
/// An attempt is counted (`reserve`) before its password is checked, so
/// parallel attempts can never check more passwords than the rule allows;
/// a right password gives its count back (`refund`).
public struct LoginRule: Sendable, Equatable {
    public enum Limit: Sendable, Equatable {
        /// The `allowed`-th attempt in a window blocks for 2 s, each further one
        /// (once the block is over) for twice as long, up to `maxBlock`.
        case block(allowed: Int64, maxBlock: Int64)
        /// Past `free` attempts in a window, one attempt per `interval` seconds:
        /// slows guessing down, never locks anyone out for long.
        case slow(free: Int64, interval: Int64)
    }

    public let limit: Limit
    /// Seconds a window lasts from its first attempt.
    public let window: Int64

    public init(_ limit: Limit, window: Int64) {
        self.limit = limit
        self.window = window
    }

    /// Seconds until an attempt may be counted, or nil when it may be now.
    public func wait(_ bucket: LoginBucket?, now: Int64) -> Int64? {
        guard let bucket, bucket.blockedUntil > now else { return nil }
        return bucket.blockedUntil - now
    }

    /// The bucket with one more attempt counted. Only when `wait` is nil.
    public func reserve(_ bucket: LoginBucket?, now: Int64) -> LoginBucket {
        var b = bucket ?? LoginBucket(failures: 0, windowStart: now, blockedUntil: 0)
        if now - b.windowStart >= window {
            b.failures = 0
            b.windowStart = now
        }
        b.failures += 1
        switch limit {
        case .block(let allowed, let maxBlock):
            if b.failures >= allowed { b.blockedUntil = now + min(maxBlock, Int64(1) << min(b.failures - allowed + 1, 20)) }
        case .slow(let free, let interval):
            if b.failures > free { b.blockedUntil = now + interval }
        }
        return b
    }

    /// The bucket with a counted attempt given back (its password was right,
    /// or it was never checked). A block it no longer reaches is lifted.
    public func refund(_ bucket: LoginBucket) -> LoginBucket {
        var b = bucket
        b.failures = max(0, b.failures - 1)
        switch limit {
        case .block(let allowed, _): if b.failures < allowed { b.blockedUntil = 0 }
        case .slow(let free, _): if b.failures <= free { b.blockedUntil = 0 }
        }
        return b
    }
}
