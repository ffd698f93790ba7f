import CJOSEShim
import CSodium

/// Time-based one-time passwords (RFC 6238) as authenticator apps make
/// them: HMAC-SHA1 (OpenSSL), 30-second steps, 6 digits; secrets are 20
/// random bytes shown in base32. A code is accepted for the step before and
/// after too (clock drift), and only for a step later than the last one
/// used (a code works once).
public enum TOTP {
    public static let period: Int64 = 30
    public static let digits = 6

    public static func newSecret() -> [UInt8] {
        precondition(Sodium.ready)
        var raw = [UInt8](repeating: 0, count: 20)
        randombytes_buf(&raw, raw.count)
        return raw
    }

    /// The code of `step` (RFC 4226's dynamic truncation).
    public static func code(secret: [UInt8], step: Int64) -> String {
        var counter = [UInt8](repeating: 0, count: 8)
        for i in 0..<8 { counter[7 - i] = UInt8(truncatingIfNeeded: UInt64(bitPattern: step) >> (8 * UInt64(i))) }
        var mac = [UInt8](repeating: 0, count: 20)
        roost_hmac_sha1(secret, secret.count, counter, counter.count, &mac)
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let text = String(value % 1_000_000)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The step `code` matches (now ±1 step, later than `after`), or nil.
    public static func match(_ code: String, secret: [UInt8], now: Int64, after: Int64) -> Int64? {
        guard code.count == digits, code.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let current = now / period
        for step in (current - 1)...(current + 1) where step > after {
            if SessionToken.constantTimeEquals(Self.code(secret: secret, step: step), code) { return step }
        }
        return nil
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    /// RFC 4648 base32 without padding, as authenticator apps read secrets.
    public static func base32(_ bytes: [UInt8]) -> String {
        var out = "", buffer: UInt32 = 0, bits = 0
        for b in bytes {
            buffer = (buffer << 8) | UInt32(b)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return out
    }

    public static func fromBase32(_ text: String) -> [UInt8]? {
        var out: [UInt8] = [], buffer: UInt32 = 0, bits = 0
        for c in text.uppercased() where c != "=" {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            buffer = (buffer << 5) | UInt32(v)
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return out
    }
}
