import Foundation
import Logging

/// The most recent log entries of this process, in memory, for the admin
/// console's live log view. Appending takes one short lock and keeps the
/// entry's parts as they are; an access entry is formatted only when read.
///
/// Entries carry a sequence number that only grows, so a reader asks for
/// "everything after `seq`" and never sees an entry twice.
public final class LogRing: @unchecked Sendable {
    /// One entry as the console shows it.
    public struct Record: Sendable {
        public let seq: UInt64
        /// Unix time in milliseconds.
        public let time: Int64
        public let level: Logger.Level
        public let label: String
        public let message: String
        public let requestID: String?
        public let fields: [(String, String)]
    }

    private enum Payload {
        case entry(level: Logger.Level, label: String, message: String, fields: [(String, String)])
        case access(AccessEntry)
    }

    private struct Slot {
        let seq: UInt64
        let time: Int64
        let payload: Payload
    }

    /// The ring every `RecordingLogSink` of `roostd` feeds.
    public static let shared = LogRing(capacity: 4096)

    public let capacity: Int
    private let lock = NSLock()
    private var slots: [Slot?]
    private var next: UInt64 = 1

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = Array(repeating: nil, count: self.capacity)
    }

    func append(level: Logger.Level, label: String, message: String, fields: [(String, String)]) {
        store(.entry(level: level, label: label, message: message, fields: fields))
    }

    func append(access entry: AccessEntry) { store(.access(entry)) }

    private func store(_ payload: Payload) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let time = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        lock.lock()
        let seq = next
        next += 1
        slots[Int(seq % UInt64(capacity))] = Slot(seq: seq, time: time, payload: payload)
        lock.unlock()
    }

    /// The sequence number the next entry will get.
    public var nextSequence: UInt64 { lock.lock(); defer { lock.unlock() }; return next }

    /// Entries after `seq`, oldest first, at `minimum` level or above and,
    /// when given, with that request id, leaving out access entries `hiding`
    /// picks; at most `limit` (the newest). `last` is the newest sequence
    /// number looked at: ask for entries after it next.
    public func entries(after seq: UInt64, minimum: Logger.Level = .trace, requestID: String? = nil,
                        hiding: ((AccessEntry) -> Bool)? = nil, limit: Int = 500) -> (records: [Record], last: UInt64) {
        lock.lock()
        let last = next - 1
        let first = max(seq + 1, last >= UInt64(capacity) ? last - UInt64(capacity) + 1 : 1)
        var picked: [Slot] = []
        if first <= last {
            picked.reserveCapacity(Int(min(last - first + 1, UInt64(capacity))))
            for s in first...last { if let slot = slots[Int(s % UInt64(capacity))], slot.seq == s { picked.append(slot) } }
        }
        lock.unlock()
        var out: [Record] = []
        for slot in picked {
            if let hiding, case .access(let entry) = slot.payload, hiding(entry) { continue }
            let record = Self.record(slot)
            guard record.level >= minimum else { continue }
            if let requestID, !requestID.isEmpty, record.requestID != requestID { continue }
            out.append(record)
        }
        return (out.count > limit ? Array(out.suffix(limit)) : out, max(last, seq))
    }

    private static func record(_ slot: Slot) -> Record {
        switch slot.payload {
        case .entry(let level, let label, let message, let fields):
            let id = fields.first { $0.0 == "request_id" }?.1
            return Record(seq: slot.seq, time: slot.time, level: level, label: label, message: message, requestID: id,
                          fields: fields.filter { $0.0 != "request_id" })
        case .access(let e):
            let message = "\(e.method) \(e.path) \(e.status) \(LogFormat.milliseconds(e.durationNanoseconds))ms"
            return Record(seq: slot.seq, time: slot.time, level: .info, label: "access", message: message, requestID: e.requestID,
                          fields: [("route", e.route), ("status", String(e.status)), ("remote", e.remoteAddress)])
        }
    }
}

/// A `LogSink` that writes through to another sink and keeps a copy of
/// every entry in a `LogRing`.
public struct RecordingLogSink: LogSink {
    let base: any LogSink
    let ring: LogRing

    public init(_ base: any LogSink, ring: LogRing = .shared) {
        self.base = base
        self.ring = ring
    }

    public func write(level: Logger.Level, label: String, message: String, fields: [(String, String)],
                      file: String, function: String, line: UInt) {
        ring.append(level: level, label: label, message: message, fields: fields)
        base.write(level: level, label: label, message: message, fields: fields, file: file, function: function, line: line)
    }

    public func writeAccess(_ entry: AccessEntry) {
        ring.append(access: entry)
        base.writeAccess(entry)
    }

    public func flushAccess() { base.flushAccess() }
}
