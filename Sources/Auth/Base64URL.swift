import CSodium

/// base64url without padding (RFC 4648 §5), as session tokens and JSON Web
/// Tokens use it; libsodium does the work.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String { SessionToken.base64URL(bytes) }

    /// The bytes of `text`, or nil when it is not unpadded base64url.
    public static func decode(_ text: Substring) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count <= 1 << 20 else { return nil }
        var out = [UInt8](repeating: 0, count: input.count * 3 / 4 + 3)
        var length = 0
        let rc = input.withUnsafeBufferPointer { inp in
            inp.baseAddress!.withMemoryRebound(to: CChar.self, capacity: input.count) { chars in
                sodium_base642bin(&out, out.count, chars, input.count, nil, &length, nil, Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING))
            }
        }
        guard !input.isEmpty, rc == 0 else { return input.isEmpty ? [] : nil }
        return Array(out.prefix(length))
    }
}
