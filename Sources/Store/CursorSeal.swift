import CSodium

/// Seals feed cursors so that clients can neither read nor forge them:
/// `crypto_secretbox` (XSalsa20-Poly1305) with a random nonce, under a
/// 32-byte key made once per database and kept in it (`_meta.cursor_key`).
///
/// A token is base64url of `version byte ‖ nonce (24) ‖ box`, where the box
/// holds `FeedCursor`'s text with fixed-width numbers. Two tokens for the
/// same position differ (fresh nonce), and a token's length depends only on
/// the length of its level tag (`shared@notes`, which its holder knows), not
/// on the position. A token this database did not seal (another database's,
/// or one with any byte changed) opens as `FeedCursor.foreign`, which every
/// check refuses as a cursor from another database; one that is not a
/// token at all opens as nil.
public struct CursorSeal: Sendable {
    let key: [UInt8]

    static let version: UInt8 = 2
    static let nonceBytes = Int(crypto_secretbox_NONCEBYTES)
    static let macBytes = Int(crypto_secretbox_MACBYTES)
    package static let keyBytes = Int(crypto_secretbox_KEYBYTES)
    /// Longer texts are not tokens (the longest level tag gives about 260).
    static let maxTokenLength = 320
    package static let ready: Bool = sodium_init() >= 0

    init(key: [UInt8]) {
        precondition(key.count == Self.keyBytes && Self.ready, "cursor key or libsodium unusable")
        self.key = key
    }

    /// The seal of a key stored as hex text (`_meta.cursor_key`, on either engine).
    public init(hexKey hex: String?) throws {
        guard let hex, let key = Self.bytes(hex: hex), key.count == Self.keyBytes else {
            throw StoreError.invalid("The database has no cursor key; run the migrations first.")
        }
        self.init(key: key)
    }

    /// The text clients hold for `cursor`.
    public func token(_ cursor: FeedCursor) -> String {
        seal(Array(cursor.sealedText.utf8), version: Self.version)
    }

    /// The cursor in `token`: nil when it is not a token, `.foreign` when
    /// this database did not seal it (or it was changed since).
    public func open(_ token: String) -> FeedCursor? {
        guard token.utf8.count <= Self.maxTokenLength, let bytes = Base64URL.decode(token) else { return nil }
        if Self.isUnsealed(bytes) { return .foreign }
        guard bytes.count > 1 + Self.nonceBytes + Self.macBytes, bytes[0] == Self.version else { return nil }
        guard let message = open(bytes) else { return .foreign }
        guard let text = String(validating: message, as: UTF8.self) else { return nil }
        return FeedCursor(sealedText: text)
    }

    /// base64url of `version ‖ nonce ‖ box of message` (a fresh random nonce
    /// each time, so equal messages give different tokens).
    func seal(_ message: [UInt8], version: UInt8) -> String {
        var out = [UInt8](repeating: 0, count: 1 + Self.nonceBytes + Self.macBytes + message.count)
        out[0] = version
        out.withUnsafeMutableBufferPointer { buffer in
            let nonce = buffer.baseAddress! + 1
            randombytes_buf(nonce, Self.nonceBytes)
            _ = crypto_secretbox_easy(nonce + Self.nonceBytes, message, UInt64(message.count), nonce, key)
        }
        return Base64URL.encode(out)
    }

    /// The message of a token `seal(_:version:)` made with `version` and
    /// this key, or nil for anything else (not base64url, too long, another
    /// kind or key, any byte changed).
    func open(_ token: String, version: UInt8, maxLength: Int) -> [UInt8]? {
        guard token.utf8.count <= maxLength, let bytes = Base64URL.decode(token),
              bytes.count > 1 + Self.nonceBytes + Self.macBytes, bytes[0] == version else { return nil }
        return open(bytes)
    }

    /// The message in sealed bytes (`version ‖ nonce ‖ box`), or nil when the box does not open.
    private func open(_ bytes: [UInt8]) -> [UInt8]? {
        var message = [UInt8](repeating: 0, count: bytes.count - 1 - Self.nonceBytes - Self.macBytes)
        let opened = bytes.withUnsafeBufferPointer { buffer -> Bool in
            let nonce = buffer.baseAddress! + 1
            let box = nonce + Self.nonceBytes
            return crypto_secretbox_open_easy(&message, box, UInt64(buffer.count - 1 - Self.nonceBytes), nonce, key) == 0
        }
        return opened ? message : nil
    }

    /// `text` sealed under this key with its own version byte (3), for secrets
    /// kept at rest (Apple refresh tokens, `AppleTokens`), never a cursor.
    public func sealSecret(_ text: String) -> String { seal(Array(text.utf8), version: 3) }

    /// What `sealSecret` sealed under this key, or nil.
    public func openSecret(_ token: String) -> String? {
        open(token, version: 3, maxLength: 16 * 1024).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// A readable cursor as roostd made them before sealing (`r1|epoch|level|seq|after|base`):
    /// a real cursor once, refused now as expired, not as malformed.
    static func isUnsealed(_ bytes: [UInt8]) -> Bool {
        guard bytes.starts(with: Array("r1|".utf8)), let text = String(validating: bytes, as: UTF8.self) else { return false }
        let parts = text.split(separator: "|", omittingEmptySubsequences: false)
        return parts.count == 6 && Int64(parts[3]).map { $0 >= 0 } == true
    }

    /// The bytes of hex text (libsodium's `sodium_hex2bin`); nil unless it is exactly that.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8CString.dropLast())
        guard digits.count % 2 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: digits.count / 2)
        var length = 0
        let ok = sodium_hex2bin(&out, out.count, digits, digits.count, nil, &length, nil) == 0
        return ok && length == out.count ? out : nil
    }
}
