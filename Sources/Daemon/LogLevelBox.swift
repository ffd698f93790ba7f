import Logging
import Synchronization

/// The process-wide log level, shared by every log handler and changed at
/// run time (config reload on SIGHUP). Reads are one relaxed atomic load.
public final class LogLevelBox: Sendable {
    private let raw: Atomic<UInt8>

    public init(_ level: Logger.Level) { raw = Atomic(Self.code(level)) }

    public var level: Logger.Level {
        get { Self.levels[Int(raw.load(ordering: .relaxed))] }
    }

    /// Sets the level; returns the previous one.
    @discardableResult
    public func set(_ level: Logger.Level) -> Logger.Level {
        Self.levels[Int(raw.exchange(Self.code(level), ordering: .relaxed))]
    }

    /// True when entries at `level` are written.
    @inline(__always)
    public func allows(_ level: Logger.Level) -> Bool { Self.code(level) >= raw.load(ordering: .relaxed) }

    private static let levels: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]

    @inline(__always)
    static func code(_ level: Logger.Level) -> UInt8 {
        switch level {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }
}
