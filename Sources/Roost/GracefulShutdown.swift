import EventLoop
import Logging

/// Stops accepting, lets in-flight requests finish (up to a deadline), then
/// stops every loop. Runs on loop 0.
final class GracefulShutdown: @unchecked Sendable {
    private let loops: [EventLoop]
    private let server: HTTPServer
    private let logger: Logger
    /// Told when shutdown begins (sd_notify `STOPPING=1`, readiness off).
    var onBegin: (String) -> Void = { _ in }
    private var started = false
    private var ticks = 0
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
        loops[0].onTick { [self] in check() }
        check()
    }

    /// Stops each loop once it has no request waiting for a response.
    private func check() {
        ticks += 1
        for loop in loops {
            loop.execute { [server, logger, ticks] in
                let pending = server.inFlight(on: loop)
                if pending == 0 || ticks > Self.deadlineSeconds {
                    if pending > 0 { logger.warning("stopping with requests in flight", metadata: ["pending": "\(pending)"]) }
                    loop.stop()
                }
            }
        }
    }
}
