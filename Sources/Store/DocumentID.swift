import CSodium
import Foundation

/// Makes server-chosen `_id`s: 24 lower-case hex digits, the seconds since
/// the epoch (8 digits, so ids sort roughly by creation time and new rows
/// land near each other in an index) followed by 64 random bits from
/// libsodium (16 digits).
///
/// There is no counter and no per-process part: the gap between two of a
/// caller's ids says nothing about how many ids anyone else was given
/// meanwhile, and nobody can predict another caller's id. Ids made in the
/// same second sort in no particular order; two ids collide with
/// probability about n²/2⁶⁵ for n ids made in one second.
public final class DocumentID: Sendable {
    private static let ready: Bool = sodium_init() >= 0

    public init() {
        precondition(Self.ready, "libsodium unusable")
    }

    public func next() -> String {
        var random: UInt64 = 0
        withUnsafeMutableBytes(of: &random) { randombytes_buf($0.baseAddress!, $0.count) }
        let seconds = UInt64(UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970)))
        // 8 + 16 hex digits, written straight into the string's storage.
        return String(unsafeUninitializedCapacity: 24) { out in
            var at = 0
            func put(_ v: UInt64, _ width: Int) {
                for i in 0..<width {
                    out[at + i] = Self.hexDigits[Int((v >> (4 * UInt64(width - 1 - i))) & 0xF)]
                }
                at += width
            }
            put(seconds, 8); put(random, 16)
            return at
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Client ids must be short, printable strings.
    public static func isValidClientID(_ id: String) -> Bool {
        !id.isEmpty && id.unicodeScalars.count <= 256 && !id.unicodeScalars.contains { $0.value < 0x20 || $0 == "/" }
    }
}
