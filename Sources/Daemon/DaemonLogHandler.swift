import Foundation
import Logging

/// The swift-log handler of `roostd`: writes to a `LogSink` at the level
/// held by a shared `LogLevelBox`, so a SIGHUP reload changes every logger.
public struct DaemonLogHandler: LogHandler {
    public let label: String
    let sink: any LogSink
    let levelBox: LogLevelBox
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(label: String, sink: any LogSink, level: LogLevelBox) {
        self.label = label
        self.sink = sink
        self.levelBox = level
    }

    /// The process-wide level; setting it changes every handler's level.
    public var logLevel: Logger.Level {
        get { levelBox.level }
        set { levelBox.set(newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var base = metadata
        if let provided = metadataProvider?.get() { base.merge(provided) { $1 } }
        sink.write(level: event.level, label: label, message: event.message.description,
                   fields: LogFormat.fields(base, event.metadata, error: event.error),
                   file: event.file, function: event.function, line: event.line)
    }
}

/// Chooses the log backend and installs it as swift-log's.
public enum DaemonLogging {
    /// `log_target`: `journal`, `stderr`, or `auto` (the journal when stderr
    /// is connected to it, as systemd says through `JOURNAL_STREAM`).
    public enum Target: String, Sendable, CaseIterable {
        case auto, journal, stderr
    }

    /// Resolves `auto`.
    public static func resolve(_ target: Target, environment: [String: String] = ProcessInfo.processInfo.environment) -> Target {
        guard target == .auto else { return target }
        return stderrIsJournal(environment["JOURNAL_STREAM"]) ? .journal : .stderr
    }

    /// True when `JOURNAL_STREAM` (`device:inode`) names our stderr.
    static func stderrIsJournal(_ value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The sink for a resolved target.
    public static func sink(for target: Target) -> any LogSink {
        resolve(target) == .journal ? JournalLogSink() : StderrLogSink()
    }

    /// Installs the handler for every `Logger`; call once, first thing.
    public static func bootstrap(sink: any LogSink, level: LogLevelBox) {
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, sink: sink, level: level) }
    }
}

/// One entry per finished request, at `info`, straight to the sink: no
/// metadata dictionary; the stderr sink batches them (see `StderrLogSink`).
public final class AccessLog: Sendable {
    let sink: any LogSink
    let level: LogLevelBox

    public init(sink: any LogSink, level: LogLevelBox) {
        self.sink = sink
        self.level = level
    }

    @inline(__always)
    public func record(_ entry: @autoclosure () -> AccessEntry) {
        guard level.allows(.info) else { return }
        sink.writeAccess(entry())
    }

    /// Writes entries the sink batched; call every 100 ms and at shutdown.
    public func flush() { sink.flushAccess() }
}
