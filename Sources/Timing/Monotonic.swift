#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic nanoseconds (`CLOCK_MONOTONIC`), for durations, deadlines and
/// heartbeats: never goes back with the wall clock.
@inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

extension Duration {
    /// The duration in whole milliseconds (rounded toward zero), for settings, logs and JSON.
    public var wholeMilliseconds: Int64 {
        components.seconds &* 1000 &+ components.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds (rounded toward zero), for comparing with `monotonicNanoseconds()`.
    public var wholeNanoseconds: Int64 {
        components.seconds &* 1_000_000_000 &+ components.attoseconds / 1_000_000_000
    }
}
