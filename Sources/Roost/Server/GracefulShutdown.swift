import EventLoop
import Foundation
import Logging

/// Stops accepting, lets in-flight requests finish (up to a deadline), then
/// stops every loop. Runs on loop 0, which stops last: its tick drives the
/// checks, so it must outlive the other loops.
final class GracefulShutdown: @unchecked Sendable {
    private let loops: [EventLoop]
    private let server: HTTPServer
    private let logger: Logger
    /// Told when shutdown begins (sd_notify `STOPPING=1`, readiness off).
    var onBegin: (String) -> Void = { _ in }
    /// False while something else still has bytes to hand the loops (live streams' last chunks).
    var settled: () -> Bool = { true }
    private var started = false
    private var ticks = 0
    /// Checks between ticks, so a daemon with nothing in flight stops within moments, not at the next second.
    private var recheck: LoopTimer?
    /// Loops (other than 0) that have been told to stop; guarded by `lock`.
    private let lock = NSLock()
    private var stoppedLoops: Set<Int> = []
    static let deadlineSeconds = 10

    init(loops: [EventLoop], server: HTTPServer, logger: Logger) {
        self.loops = loops
        self.server = server
        self.logger = logger
    }

    func begin(reason: String) {
        guard !started else { return }
        started = true
        logger.info("shutting down", metadata: ["signal": "\(reason)"])
        onBegin(reason)
        server.stopAccepting()
        loops[0].onTick { [self] in
            ticks += 1
            check()
        }
        recheck = loops[0].every(.milliseconds(50)) { [self] in check() }
        check()
    }

    /// Stops each loop once it has no request waiting for a response, or at
    /// the deadline; loop 0 only after all the others. Runs on loop 0: every
    /// 50 ms and as soon as another loop has stopped (the deadline counts
    /// the loop's one-second ticks).
    private func check() {
        let overdue = ticks > Self.deadlineSeconds
        guard settled() || overdue else { return }
        for loop in loops.dropFirst() {
            loop.execute { [self] in
                let pending = server.inFlight(on: loop)
                guard pending == 0 || overdue else { return }
                lock.lock()
                let first = stoppedLoops.insert(loop.index).inserted
                lock.unlock()
                guard first else { return }
                if pending > 0 { logger.warning("stopping with requests in flight", metadata: ["loop": "\(loop.index)", "pending": "\(pending)"]) }
                loop.stop()
                loops[0].execute { [self] in check() }
            }
        }
        lock.lock()
        let othersStopped = stoppedLoops.count == loops.count - 1
        lock.unlock()
        let pending = server.inFlight(on: loops[0])
        guard othersStopped, pending == 0 || overdue else { return }
        if pending > 0 { logger.warning("stopping with requests in flight", metadata: ["loop": "0", "pending": "\(pending)"]) }
        recheck?.cancel()
        recheck = nil
        loops[0].stop()
    }
}
