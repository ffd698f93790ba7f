import CSystemd
import Foundation

/// Tells the service manager how the daemon is doing (`sd_notify`).
///
/// Every call is a no-op when `NOTIFY_SOCKET` is unset, so the daemon behaves
/// the same in a terminal, a container or a test. Safe from any thread.
public struct SystemdNotifier: Sendable {
    public init() {}

    /// True when a service manager listens (`NOTIFY_SOCKET` is set).
    public var isListening: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends newline-separated `KEY=value` assignments; returns false if the send failed.
    @discardableResult
    public func notify(_ state: String) -> Bool { sd_notify(0, state) >= 0 }

    /// `READY=1`: listeners are bound and migrations are done.
    public func ready(status: String) { notify("READY=1\nSTATUS=\(Self.oneLine(status))\nMAINPID=\(getpid())") }

    /// A one-line summary for `systemctl status`.
    public func status(_ text: String) { notify("STATUS=\(Self.oneLine(text))") }

    /// `STOPPING=1`: shutdown has begun.
    public func stopping(status: String) { notify("STOPPING=1\nSTATUS=\(Self.oneLine(status))") }

    /// `RELOADING=1` before re-reading the configuration, then `READY=1` after it.
    public func reloading(_ reloading: Bool) { notify(reloading ? "RELOADING=1" : "READY=1") }

    /// `WATCHDOG=1`: the daemon is alive.
    public func watchdogPing() { notify("WATCHDOG=1") }

    /// The watchdog timeout the manager asked for (`WATCHDOG_USEC`, honouring
    /// `WATCHDOG_PID`), or nil when the watchdog is off.
    public static func watchdogTimeout() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec))
    }

    static func oneLine(_ s: String) -> String {
        s.contains("\n") ? s.replacingOccurrences(of: "\n", with: " ") : s
    }
}

/// Listening sockets passed in by systemd socket activation (`LISTEN_FDS`).
public enum SocketActivation {
    /// The inherited descriptors (3, 4, …), checked against `LISTEN_PID`. The
    /// `LISTEN_*` variables are removed so children do not inherit them.
    public static func takeListeningDescriptors() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { SD_LISTEN_FDS_START + $0 }
    }
}
