import Daemon
import Synchronization

/// What `roostd`'s main hands the server beside its config: the systemd
/// notifier, sockets from socket activation, the shared log level, the
/// access log and a way to re-read the configuration on SIGHUP.
public struct DaemonServices: Sendable {
    public var notifier = SystemdNotifier()
    /// Listening sockets passed in by systemd (`LISTEN_FDS`); when present,
    /// `listen` is not bound.
    public var inheritedSockets: [Int32] = []
    /// The process-wide log level that SIGHUP may change.
    public var logLevel: LogLevelBox?
    /// One entry per finished request; nil writes none.
    public var accessLog: AccessLog?
    /// Loads the configuration again, from the same sources as at start.
    public var reloadConfig: (@Sendable () throws -> RoostConfig)?

    public init() {}
}

/// Whether the server is draining for shutdown; `/readyz` answers 503 then.
final class ServerState: Sendable {
    private let draining = Atomic<Bool>(false)

    var isDraining: Bool { draining.load(ordering: .relaxed) }

    func beginDraining() { draining.store(true, ordering: .relaxed) }
}
