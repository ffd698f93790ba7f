import Logging
import Timing

/// A part of the daemon with a lifetime (a pool, a dispatcher, a sweeper):
/// `RoostServer` starts its services in the order it declares them and stops
/// them in reverse, so a service may use every one declared before it.
protocol RoostService {
    /// How the log names it (`service=…`).
    var name: String { get }
    /// Starts its threads; a throw stops the start-up (the ones before it are stopped again).
    func start() throws
    /// Stops taking work and lets what runs finish (drain); the loops have stopped by then.
    func stop()
}

/// A service made of two closures, for the parts whose own start and stop
/// take arguments or have other names.
struct ServiceStep: RoostService {
    let name: String
    private let starting: () throws -> Void
    private let stopping: () -> Void

    init(_ name: String, start: @escaping () throws -> Void = {}, stop: @escaping () -> Void = {}) {
        self.name = name
        starting = start
        stopping = stop
    }

    func start() throws { try starting() }
    func stop() { stopping() }
}

/// Services started in order and stopped in reverse, each logged once at
/// either end (`service started service=… ms=…`, `service stopped …`), so the
/// journal shows which one a slow start or a slow drain waits on.
final class ServiceList {
    private let services: [any RoostService]
    private let logger: Logger
    /// How many of `services` have started (the ones `stop` stops).
    private var started = 0

    init(_ services: [any RoostService], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// Starts every service in order. When one fails, the ones already
    /// started are stopped in reverse and its error is rethrown.
    func start() throws {
        precondition(started == 0, "services start once")
        for service in services {
            let began = monotonicNanoseconds()
            do {
                try service.start()
            } catch {
                logger.error("service failed to start", metadata: ["service": "\(service.name)", "error": "\(error)"])
                stop()
                throw error
            }
            started += 1
            logger.info("service started", metadata: ["service": "\(service.name)", "ms": "\(Self.milliseconds(since: began))"])
        }
    }

    /// Stops the started services, the last started first.
    func stop() {
        while started > 0 {
            started -= 1
            let service = services[started]
            let began = monotonicNanoseconds()
            service.stop()
            logger.info("service stopped", metadata: ["service": "\(service.name)", "ms": "\(Self.milliseconds(since: began))"])
        }
    }

    private static func milliseconds(since start: UInt64) -> UInt64 { (monotonicNanoseconds() - start) / 1_000_000 }
}
