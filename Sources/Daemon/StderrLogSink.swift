import Foundation
import Logging

/// Readable lines on a file descriptor (stderr):
///
///     2025-06-01T12:00:00.123Z info roostd: roostd listening listen=127.0.0.1:8080 loops=2
///     2025-06-01T12:00:01.456Z info roostd: GET /items 200 0.412ms request_id=3fa1-0-1 remote=127.0.0.1
///
/// Control characters are replaced with spaces, so one entry is one line.
/// Log entries are written at once, one `write(2)` each. Access-log lines
/// are collected and written together when 16 KiB are waiting, when any
/// other entry is written (so lines stay in order), and on `flushAccess()`,
/// which the daemon calls every 100 ms and at shutdown (as nginx's
/// `access_log … buffer= flush=`): a `kill -9` can lose at most that much
/// of the access log, never an error or a notice.
public struct StderrLogSink: LogSink {
    let fd: Int32
    let pending = PendingLines()

    public init(fd: Int32 = 2) { self.fd = fd }

    public func write(level: Logger.Level, label: String, message: String, fields: [(String, String)],
                      file: String, function: String, line: UInt) {
        var out = LineBuffer(capacity: 128 + message.utf8.count)
        out.timestamp()
        out.raw(" ")
        out.raw(level.rawValue)
        out.raw(" ")
        out.text(label)
        out.raw(": ")
        out.text(message)
        for (key, value) in fields { out.field(key, value) }
        out.raw("\n")
        pending.write(out.bytes, to: fd)
    }

    public func writeAccess(_ e: AccessEntry) {
        var out = LineBuffer(capacity: 160 + e.path.utf8.count)
        out.timestamp()
        out.raw(" info roostd: ")
        out.raw(e.method)
        out.raw(" ")
        out.text(e.path)
        out.raw(" ")
        out.raw(String(e.status))
        out.raw(" ")
        out.raw(LogFormat.milliseconds(e.durationNanoseconds))
        out.raw("ms")
        out.field("request_id", e.requestID)
        out.field("remote", e.remoteAddress)
        out.raw("\n")
        pending.append(out.bytes, to: fd)
    }

    public func flushAccess() { pending.write([], to: fd) }
}

/// Access-log lines waiting to be written, shared by the event loops.
final class PendingLines: @unchecked Sendable {
    static let limit = 16 * 1024
    // Guarded by `lock`.
    private let lock = NSLock()
    private var bytes: [UInt8] = []

    /// Queues `line`; writes everything once `limit` bytes wait.
    func append(_ line: [UInt8], to fd: Int32) {
        lock.lock()
        bytes.append(contentsOf: line)
        guard bytes.count >= Self.limit else { lock.unlock(); return }
        let out = take()
        lock.unlock()
        Self.write(out, fd)
    }

    /// Writes what waits, then `entry`, in one call (under the lock, so lines keep their order).
    func write(_ entry: [UInt8], to fd: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if bytes.isEmpty {
            Self.write(entry, fd)
        } else {
            bytes.append(contentsOf: entry)
            Self.write(take(), fd)
        }
    }

    private func take() -> [UInt8] {
        let out = bytes
        bytes.removeAll(keepingCapacity: true)
        return out
    }

    static func write(_ bytes: [UInt8], _ fd: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}

/// One line being built; a single heap buffer.
struct LineBuffer {
    var bytes: [UInt8]

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ s: String) { bytes.append(contentsOf: s.utf8) }

    /// Appends `s` with control characters replaced by spaces.
    mutating func text(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            // Nearly always clean: one copy instead of a check per byte.
            guard utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return bytes.append(contentsOf: utf8) }
            for c in utf8 { bytes.append(c < 0x20 || c == 0x7F ? 0x20 : c) }
        }
    }

    /// ` key=value`, quoting values that hold spaces, quotes, backslashes or
    /// control characters; inside the quotes `"` and `\` are escaped with `\`
    /// and control characters written `\xHH`, so no value can end the line or
    /// forge another field.
    mutating func field(_ key: String, _ value: String) {
        bytes.append(0x20)
        text(key)
        bytes.append(UInt8(ascii: "="))
        if value.isEmpty || value.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            let hex = Array("0123456789ABCDEF".utf8)
            bytes.append(UInt8(ascii: "\""))
            for c in value.utf8 {
                if c < 0x20 || c == 0x7F {
                    bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(c >> 4)], hex[Int(c & 0xF)]])
                    continue
                }
                if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(c)
            }
            bytes.append(UInt8(ascii: "\""))
        } else {
            text(value)
        }
    }

    /// `2025-06-01T12:00:00.123Z`, UTC, without Foundation.
    mutating func timestamp() {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var seconds = ts.tv_sec
        var t = tm()
        gmtime_r(&seconds, &t)
        digits(Int(t.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
        digits(Int(t.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
        digits(Int(t.tm_mday), 2); bytes.append(UInt8(ascii: "T"))
        digits(Int(t.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(t.tm_min), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(t.tm_sec), 2); bytes.append(UInt8(ascii: "."))
        digits(Int(ts.tv_nsec) / 1_000_000, 3); bytes.append(UInt8(ascii: "Z"))
    }

    private mutating func digits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var v = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((v / divisor) % 10))
            v %= divisor
            divisor /= 10
        }
    }
}
