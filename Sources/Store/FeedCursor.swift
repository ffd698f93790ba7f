import Foundation

/// A position in the change feed as clients hold it: opaque text that names
/// the database's epoch, the collection and its permission level when it was
/// handed out (`level`, e.g. `private@notes`), the feed position, and, while a first full listing is still
/// being paged, the last row it returned.
///
/// A cursor from another database, from before a restore (a new epoch),
/// from before a change of the collection's level, or older than the
/// retained feed is refused (410 `CursorExpired`), never read wrongly.
public struct FeedCursor: Equatable, Sendable {
    public let epoch: String
    public let level: String
    /// Every change up to this position is reflected.
    public let seq: Int64
    /// Listing phase: rows after this row id remain to be listed.
    public let afterRowID: Int64?
    /// While a sync is paged (`more`), the position it started from: whether
    /// the client could know an entity is judged from every state it had
    /// after this position, not only after the page's.
    public let base: Int64?

    public init(epoch: String, level: String, seq: Int64, afterRowID: Int64?, base: Int64? = nil) {
        self.epoch = epoch
        self.level = level
        self.seq = seq
        self.afterRowID = afterRowID
        self.base = base
    }

    static let version = "r1"

    /// The text clients hold: base64url without padding.
    public var token: String {
        let raw = [Self.version, epoch, level, String(seq), afterRowID.map(String.init) ?? "-", base.map(String.init) ?? "-"]
            .joined(separator: "|")
        return Data(raw.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Parses a token; nil when it is not one Roost made.
    public init?(token: String) {
        guard token.utf8.count <= 200 else { return nil }
        var b64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.utf8.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), let raw = String(data: data, encoding: .utf8) else { return nil }
        let parts = raw.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0] == Self.version, let seq = Int64(parts[3]), seq >= 0 else { return nil }
        func optional(_ text: String) -> Int64?? {
            if text == "-" { return .some(nil) }
            guard let n = Int64(text), n >= 0 else { return nil }
            return .some(n)
        }
        guard let after = optional(parts[4]), let base = optional(parts[5]), (base ?? 0) <= seq else { return nil }
        self.init(epoch: parts[1], level: parts[2], seq: seq, afterRowID: after, base: base)
    }
}
