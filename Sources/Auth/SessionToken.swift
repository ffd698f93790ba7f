import CSodium

/// Opaque session tokens: 256 random bits, URL-safe base64. Only their
/// BLAKE2b hash is ever stored, so a stolen database holds no usable token.
public enum SessionToken {
    public static let randomBytes = 32

    /// A new token and the hash to store for it.
    public static func generate() -> (token: String, hash: String) {
        precondition(Sodium.ready)
        var raw = [UInt8](repeating: 0, count: randomBytes)
        randombytes_buf(&raw, raw.count)
        let token = base64URL(raw)
        return (token, hash(token))
    }

    /// The stored form of `token`: hex BLAKE2b-256.
    public static func hash(_ token: String) -> String {
        precondition(Sodium.ready)
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(token.utf8)
        crypto_generichash(&digest, digest.count, bytes, UInt64(bytes.count), nil, 0)
        return digest.map { byte in
            let h = String(byte, radix: 16)
            return byte < 16 ? "0" + h : h
        }.joined()
    }

    /// Constant-time equality of two strings' bytes.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        return sodium_memcmp(x, y, x.count) == 0
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let variant = Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        let length = sodium_base64_encoded_len(bytes.count, variant)
        var out = [CChar](repeating: 0, count: length)
        _ = sodium_bin2base64(&out, length, bytes, bytes.count, variant)
        return String(cString: out)
    }
}
