import Foundation

/// Keeps a backup's reads and writes under a byte rate by sleeping when it
/// runs ahead, so the copy leaves the disk to the daemon. No limit: no sleep.
/// Also where a backup notices it was cancelled (the daemon stopping).
final class Pacer: @unchecked Sendable {
    private let bytesPerSecond: Int?
    private let isCancelled: @Sendable () -> Bool
    private let started = DispatchTime.now().uptimeNanoseconds
    private var bytes = 0

    init(bytesPerSecond: Int?, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.bytesPerSecond = bytesPerSecond
        self.isCancelled = isCancelled
    }

    /// False once the backup was cancelled.
    var shouldContinue: Bool { !isCancelled() }

    /// Counts `count` bytes done and sleeps until the rate allows them.
    func account(_ count: Int) {
        guard let rate = bytesPerSecond, rate > 0 else { return }
        bytes += count
        let due = UInt64(Double(bytes) / Double(rate) * 1e9)
        let elapsed = DispatchTime.now().uptimeNanoseconds - started
        var wait = due > elapsed ? (due - elapsed) / 1000 : 0
        // In slices, so that a cancel is noticed.
        while wait > 0 && !isCancelled() {
            let slice = min(wait, 100_000)
            usleep(useconds_t(slice))
            wait -= slice
        }
    }
}
