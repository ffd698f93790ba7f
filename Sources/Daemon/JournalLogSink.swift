import CSystemd
import Foundation
import Logging

/// Native journal entries through `sd_journal_sendv`: `MESSAGE`, `PRIORITY`
/// (from the level), `SYSLOG_IDENTIFIER=roostd`, `CODE_*`, and every metadata
/// key as an upper-case field (`request_id` → `REQUEST_ID`), so
/// `journalctl REQUEST_ID=…` finds one request's entries.
///
/// Each entry is copied once into a temporary (usually stack) buffer that the
/// iovecs point into. If the journal cannot be reached the entry goes to
/// `fallback` (stderr) instead of being lost.
public struct JournalLogSink: LogSink {
    public static let identifier = "roostd"
    let fallback: StderrLogSink

    public init(fallback: StderrLogSink = StderrLogSink()) { self.fallback = fallback }

    public func write(level: Logger.Level, label: String, message: String, fields: [(String, String)],
                      file: String, function: String, line: UInt) {
        var entry: [(String, String)] = [
            ("MESSAGE", message),
            ("PRIORITY", LogFormat.priority(level)),
            ("SYSLOG_IDENTIFIER", Self.identifier),
            ("CODE_FILE", file),
            ("CODE_LINE", String(line)),
            ("CODE_FUNC", function),
            ("LOGGER", label),
        ]
        entry.reserveCapacity(entry.count + fields.count)
        for (key, value) in fields { entry.append((LogFormat.journalName(key), value)) }
        if Self.send(entry) < 0 {
            fallback.write(level: level, label: label, message: message, fields: fields, file: file, function: function, line: line)
        }
    }

    public func writeAccess(_ e: AccessEntry) {
        let status = String(e.status)
        let duration = LogFormat.milliseconds(e.durationNanoseconds)
        let fields: [(String, String)] = [
            ("MESSAGE", e.method + " " + e.path + " " + status + " " + duration + "ms"),
            ("PRIORITY", "6"),
            ("SYSLOG_IDENTIFIER", Self.identifier),
            ("REQUEST_ID", e.requestID),
            ("HTTP_METHOD", e.method),
            ("HTTP_PATH", e.path),
            ("HTTP_ROUTE", e.route),
            ("HTTP_STATUS", status),
            ("DURATION_MS", duration),
            ("REMOTE_ADDR", e.remoteAddress),
        ]
        if Self.send(fields) < 0 { fallback.writeAccess(e) }
    }

    /// Sends `NAME=value` pairs as one entry; returns sd_journal_sendv's result.
    static func send(_ fields: [(String, String)]) -> Int32 {
        var total = 0
        for (name, value) in fields { total += name.utf8.count + 1 + value.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(total, 1)) { bytes in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: fields.count) { vectors in
                var offset = 0
                for (i, (name, value)) in fields.enumerated() {
                    let start = offset
                    offset = copy(name, into: bytes, at: offset)
                    bytes[offset] = UInt8(ascii: "=")
                    offset = copy(value, into: bytes, at: offset + 1)
                    vectors[i] = iovec(iov_base: UnsafeMutableRawPointer(bytes.baseAddress! + start), iov_len: offset - start)
                }
                return sd_journal_sendv(vectors.baseAddress, Int32(fields.count))
            }
        }
    }

    private static func copy(_ s: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var i = offset
        for c in s.utf8 { buffer[i] = c; i += 1 }
        return i
    }
}
