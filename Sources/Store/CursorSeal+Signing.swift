import CSodium

/// Signatures under the database's secret (`_meta.cursor_key`, one for all
/// nodes): HMAC-SHA256 under a sub-key derived per purpose, so a signature
/// made for one use (signed file URLs) never verifies for another, and the
/// cursor key itself is never used as an HMAC key.
extension CursorSeal {
    /// The purpose's sub-key: HMAC-SHA256(cursor key, "roost-subkey:" + purpose).
    func subkey(_ purpose: String) -> [UInt8] {
        Self.hmac(Array(("roost-subkey:" + purpose).utf8), key: key)
    }

    /// base64url of HMAC-SHA256(`message`) under `purpose`'s sub-key.
    public func signature(_ message: String, purpose: String) -> String {
        Base64URL.encode(Self.hmac(Array(message.utf8), key: subkey(purpose)))
    }

    /// True when `signature` is `message`'s under `purpose` (compared in constant time).
    public func verifies(_ signature: String, _ message: String, purpose: String) -> Bool {
        guard signature.utf8.count <= 64, let given = Base64URL.decode(signature),
              given.count == Int(crypto_auth_hmacsha256_BYTES) else { return false }
        let expected = Self.hmac(Array(message.utf8), key: subkey(purpose))
        return sodium_memcmp(given, expected, expected.count) == 0
    }

    static func hmac(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(key.count == Int(crypto_auth_hmacsha256_KEYBYTES) && ready, "HMAC key or libsodium unusable")
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256(&mac, message, UInt64(message.count), key)
        return mac
    }
}
