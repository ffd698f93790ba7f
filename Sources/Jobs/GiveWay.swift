import Foundation

/// Lets a long stretch of background work give the CPU to a request thread
/// that is waiting for it.
///
/// A thread that sleeps and wakes hundreds of times a second (the writer,
/// the push thread, the live fan-out) is, when it runs, mostly in the first
/// slice after a wake-up, and Linux's scheduler (EEVDF) lets that slice run
/// to its end before a loop or reader woken on the same CPU gets it; with the
/// kernel's tick at 250 Hz that wait can reach 4 ms. `sched_yield` every
/// `stretch` of work ends the slice early when someone is waiting, and costs
/// a system call (about 1 µs) when no one is (docs/PUSH.md, Measured).
public struct GiveWay {
    /// The longest stretch of work between two yields (the push client's C loops get it too: `HTTP2Client`).
    public static let stretchNanoseconds: UInt64 = 50_000
    private var since = DispatchTime.now().uptimeNanoseconds

    public init() {}

    /// Call between items of work: yields once `stretchNanoseconds` have passed since the last yield.
    @inline(__always)
    public mutating func check() {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now &- since >= Self.stretchNanoseconds else { return }
        sched_yield()
        since = DispatchTime.now().uptimeNanoseconds
    }
}
