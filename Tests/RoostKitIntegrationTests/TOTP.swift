import Foundation

/// RFC 6238 codes (HMAC-SHA1, 30 s steps, 6 digits) for the two-factor tests,
/// as an authenticator app makes them from the base32 secret.
enum TOTP {
    static func code(secret: String, at date: Date = Date(), stepOffset: Int64 = 0) -> String {
        let key = base32Decode(secret)
        var counter = (Int64(date.timeIntervalSince1970) / 30 + stepOffset).bigEndian
        let message = withUnsafeBytes(of: &counter) { [UInt8]($0) }
        let mac = hmacSHA1(key: key, message: message)
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])) % 1_000_000
        return String(format: "%06u", value)
    }

    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, value = 0
        var out: [UInt8] = []
        for ch in text.uppercased() where ch != "=" {
            guard let i = alphabet.firstIndex(of: ch) else { continue }
            value = (value << 5) | i
            bits += 5
            if bits >= 8 { out.append(UInt8((value >> (bits - 8)) & 0xff)); bits -= 8 }
        }
        return out
    }

    static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? sha1(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = sha1(k.map { $0 ^ 0x36 } + message)
        return sha1(k.map { $0 ^ 0x5c } + inner)
    }

    static func sha1(_ data: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
        var m = data
        let bitLength = UInt64(data.count) * 8
        m.append(0x80)
        while m.count % 64 != 56 { m.append(0) }
        for s in stride(from: 56, through: 0, by: -8) { m.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(s))) }
        func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }
        for chunk in stride(from: 0, to: m.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for i in 0..<16 { let b = chunk + i * 4; w[i] = UInt32(m[b]) << 24 | UInt32(m[b + 1]) << 16 | UInt32(m[b + 2]) << 8 | UInt32(m[b + 3]) }
            for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) = i < 20 ? ((b & c) | (~b & d), 0x5A827999) : i < 40 ? (b ^ c ^ d, 0x6ED9EBA1)
                    : i < 60 ? ((b & c) | (b & d) | (c & d), 0x8F1BBCDC) : (b ^ c ^ d, 0xCA62C1D6)
                let t = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotl(b, 30), a, t)
            }
            for (i, v) in [a, b, c, d, e].enumerated() { h[i] = h[i] &+ v }
        }
        return h.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> UInt32(24 - $0 * 8)) } }
    }
}
