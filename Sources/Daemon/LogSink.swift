import Logging

/// One finished HTTP request, as the access log writes it.
public struct AccessEntry: Sendable {
    public var method: String
    public var path: String
    /// The route template, e.g. `/:collection/:id`.
    public var route: String
    public var status: Int
    public var durationNanoseconds: UInt64
    public var requestID: String
    public var remoteAddress: String

    public init(method: String, path: String, route: String, status: Int, durationNanoseconds: UInt64,
                requestID: String, remoteAddress: String) {
        self.method = method
        self.path = path
        self.route = route
        self.status = status
        self.durationNanoseconds = durationNanoseconds
        self.requestID = requestID
        self.remoteAddress = remoteAddress
    }
}

/// Where formatted log entries go: the journal or stderr. Shared by the
/// swift-log handlers and the access log, so both look alike.
public protocol LogSink: Sendable {
    /// Writes one entry. `fields` have lower-case `snake_case` names
    /// (`request_id`); a journal sink upper-cases them (`REQUEST_ID`).
    func write(level: Logger.Level, label: String, message: String, fields: [(String, String)],
               file: String, function: String, line: UInt)

    /// Writes one access-log entry (a sink may batch these; see `flushAccess`).
    func writeAccess(_ entry: AccessEntry)

    /// Writes access-log entries the sink is holding back.
    func flushAccess()
}

extension LogSink {
    public func flushAccess() {}
}

/// Small formatting helpers that avoid Foundation on the hot path.
public enum LogFormat {
    /// A client-controlled value (a request path) made safe for every log
    /// sink: printable ASCII other than `"` and `\` stays, every other byte
    /// (space, control characters, `"`, `\`, non-ASCII) becomes `\xHH`, so a
    /// client cannot split a log line, forge a field or fake an entry.
    /// Nearly always clean: then the string itself, with no copy.
    public static func escaped(_ value: String) -> String {
        let needs = value.utf8.contains { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        guard needs else { return value }
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count * 2)
        for c in value.utf8 {
            if c <= 0x20 || c >= 0x7F || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `1234567` ns → `"1.235"` (milliseconds, three decimals).
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let micros = (nanoseconds + 500) / 1000
        let fraction = micros % 1000
        let pad = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
        return String(micros / 1000) + "." + pad + String(fraction)
    }

    /// The journal's `PRIORITY` (syslog severity) for a swift-log level.
    static func priority(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "7"
        case .info: "6"
        case .notice: "5"
        case .warning: "4"
        case .error: "3"
        case .critical: "2"
        }
    }

    /// `request_id` → `REQUEST_ID`. Journal field names are `[A-Z0-9_]`, must
    /// not start with `_` (reserved for trusted fields) or a digit, and are at
    /// most 64 bytes.
    static func journalName(_ key: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count + 1)
        for c in key.utf8 {
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): bytes.append(c - 32)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): bytes.append(c)
            default: bytes.append(UInt8(ascii: "_"))
            }
        }
        if let first = bytes.first, first == UInt8(ascii: "_") || (first >= 48 && first <= 57) {
            bytes.insert(UInt8(ascii: "F"), at: 0)
        }
        if bytes.isEmpty { bytes = Array("FIELD".utf8) }
        return String(decoding: bytes.prefix(64), as: UTF8.self)
    }

    /// Merges handler metadata and the event's metadata into sorted fields.
    static func fields(_ base: Logger.Metadata, _ extra: Logger.Metadata?, error: (any Error)?) -> [(String, String)] {
        var merged = base
        if let extra { merged.merge(extra) { $1 } }
        if let error, merged["error"] == nil { merged["error"] = "\(error)" }
        return merged.sorted { $0.key < $1.key }.map { ($0.key, $0.value.description) }
    }
}
