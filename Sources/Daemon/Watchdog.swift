import Foundation
import Logging
import Timing

/// Sends `WATCHDOG=1` only while every event loop is alive.
///
/// Loop 0 calls `tick` from its own timer every `pingInterval`: it pings
/// systemd if every loop answered a heartbeat within `timeout`, then asks each
/// loop for a fresh heartbeat (the caller posts `beat` through each loop's
/// inbox). A wedged loop stops answering, the pings stop, and systemd
/// restarts the daemon after `WatchdogSec=`. A wedged loop 0 stops its own
/// timer, with the same effect.
public final class Watchdog: @unchecked Sendable {
    /// systemd's timeout (`WATCHDOG_USEC`).
    public let timeout: Duration
    private let notifier: SystemdNotifier
    private let logger: Logger
    private let lock = NSLock()
    private var lastBeat: [UInt64]
    private var warned = false

    public init(loops: Int, timeout: Duration, notifier: SystemdNotifier = SystemdNotifier(), logger: Logger) {
        self.timeout = timeout
        self.notifier = notifier
        self.logger = logger
        lastBeat = Array(repeating: monotonicNanoseconds(), count: max(1, loops))
    }

    /// How often loop 0 should call `tick`: half the timeout, at least 10 ms.
    public var pingInterval: Duration { max(timeout / 2, .milliseconds(10)) }

    /// Records that `loop` ran its heartbeat. Any thread.
    public func beat(loop: Int) {
        let now = monotonicNanoseconds()
        lock.lock(); lastBeat[loop] = now; lock.unlock()
    }

    /// Pings systemd when every loop is fresh. Returns whether it pinged.
    @discardableResult
    public func tick() -> Bool {
        let now = monotonicNanoseconds()
        let limit = UInt64(timeout.wholeNanoseconds)
        lock.lock()
        let stale = lastBeat.indices.filter { now &- lastBeat[$0] > limit }
        let warn = !stale.isEmpty && !warned
        warned = !stale.isEmpty
        lock.unlock()
        if stale.isEmpty {
            notifier.watchdogPing()
            return true
        }
        if warn { logger.critical("event loop not answering; withholding watchdog pings", metadata: ["loops": "\(stale)"]) }
        return false
    }
}
