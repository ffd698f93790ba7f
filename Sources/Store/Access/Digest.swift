/// A short digest of text that is the same in every process and on every
/// node (Swift's `Hasher` is seeded per process): for fingerprints carried
/// in sync cursors, never for security.
enum Digest {
    /// FNV-1a, 64 bits, as 16 hex digits.
    static func fnv1a(_ text: String) -> String {
        let hex = String(fnv1a64(text), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// FNV-1a, 64 bits.
    static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
