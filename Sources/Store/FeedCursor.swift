/// A position in the change feed, which clients hold sealed (`CursorSeal`):
/// it names the database's epoch, the collection and its permission level when it was
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

    /// A cursor that this database did not seal (see `CursorSeal.open`): its
    /// epoch matches no database, so it is refused as one from another database.
    public static let foreign = FeedCursor(epoch: "", level: "", seq: 0, afterRowID: nil)

    static let version = "r2"
    private static let width = 19

    /// The text `CursorSeal` seals: `r2|epoch|level|seq|after|base`, each
    /// number in 19 digits (a missing one as 19 `-`), so its length never
    /// tells the position.
    var sealedText: String {
        func fixed(_ n: Int64?) -> String {
            guard let n else { return String(repeating: "-", count: Self.width) }
            let digits = String(n)
            return String(repeating: "0", count: max(0, Self.width - digits.count)) + digits
        }
        return [Self.version, epoch, level, fixed(seq), fixed(afterRowID), fixed(base)].joined(separator: "|")
    }

    /// Parses a sealed text; nil when it is not one Roost made.
    init?(sealedText raw: String) {
        let parts = raw.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0] == Self.version, !parts[1].isEmpty, let seq = Int64(parts[3]), seq >= 0 else { return nil }
        func optional(_ text: String) -> Int64?? {
            if !text.isEmpty, text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") }) { return .some(nil) }
            guard let n = Int64(text), n >= 0 else { return nil }
            return .some(n)
        }
        guard let after = optional(parts[4]), let base = optional(parts[5]), (base ?? 0) <= seq else { return nil }
        self.init(epoch: parts[1], level: parts[2], seq: seq, afterRowID: after, base: base)
    }
}

/// base64url without padding, on bytes: every delta request reads one cursor
/// and makes one, without Foundation's `Data` and string replacing.
/// Decoding also takes the standard alphabet (`+`, `/`) and `=` padding, as
/// the tokens' first parser did.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18)]); out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)]); out.append(alphabet[Int(n & 63)])
            i += 3
        }
        if i < bytes.count {
            let n = UInt32(bytes[i]) << 16 | (i + 1 < bytes.count ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18)]); out.append(alphabet[Int(n >> 12 & 63)])
            if i + 1 < bytes.count { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil for a character outside the alphabet or a length no encoding has.
    public static func decode(_ text: String) -> [UInt8]? {
        var digits = text.utf8[...]
        while digits.last == UInt8(ascii: "=") { digits = digits.dropLast() }
        guard digits.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(digits.count * 3 / 4)
        var accumulator: UInt32 = 0, bits = 0
        for c in digits {
            let v = values[Int(c)]
            guard v >= 0 else { return nil }
            accumulator = (accumulator << 6 | UInt32(v)) & 0xFFFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
