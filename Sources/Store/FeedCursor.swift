import Foundation

/// A position in the change feed as clients hold it: opaque text that names
/// the database's epoch, the collection's permission level when it was
/// handed out, the feed position, and, while a first full listing is still
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

    public init(epoch: String, level: String, seq: Int64, afterRowID: Int64?) {
        self.epoch = epoch
        self.level = level
        self.seq = seq
        self.afterRowID = afterRowID
    }

    static let version = "r1"

    /// The text clients hold: base64url without padding.
    public var token: String {
        let raw = [Self.version, epoch, level, String(seq), afterRowID.map(String.init) ?? "-"].joined(separator: "|")
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
        guard parts.count == 5, parts[0] == Self.version, let seq = Int64(parts[3]), seq >= 0 else { return nil }
        let after: Int64?
        if parts[4] == "-" { after = nil } else {
            guard let rid = Int64(parts[4]), rid >= 0 else { return nil }
            after = rid
        }
        self.init(epoch: parts[1], level: parts[2], seq: seq, afterRowID: after)
    }
}
