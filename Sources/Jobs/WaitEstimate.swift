import Foundation

/// Predicts how long a job submitted now would wait in a pool's queue, from
/// the queue's depth and a moving average of recent job times.
///
/// A pool whose jobs take long and vary with load (password hashes slow down
/// when the loops keep the cores busy) uses it to refuse work up front: a
/// client told 503 + Retry-After at once is better served than one whose
/// request times out in the queue.
public final class WaitEstimate: @unchecked Sendable {
    private let lock = NSLock()
    private var average: Double
    private let weight: Double

    /// - Parameters:
    ///   - initial: the job time assumed before any job has finished, in seconds.
    ///   - weight: how much each finished job moves the average (0...1).
    public init(initial: Double, weight: Double = 0.2) {
        average = initial
        self.weight = weight
    }

    /// The moving average of job times, in seconds.
    public var jobSeconds: Double {
        lock.lock(); defer { lock.unlock() }
        return average
    }

    /// Records one finished job's time.
    public func record(seconds: Double) {
        lock.lock()
        average += weight * (seconds - average)
        lock.unlock()
    }

    /// The expected wait, in seconds, before a job joining `queued` others
    /// starts on one of `threads` threads.
    public func wait(queued: Int, threads: Int) -> Double {
        Double(queued) * jobSeconds / Double(max(1, threads))
    }
}
