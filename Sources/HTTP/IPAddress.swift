import Glibc

/// An IPv4 or IPv6 address as 16 bytes; IPv4 (and IPv4-mapped IPv6,
/// `::ffff:a.b.c.d`, as a dual-stack socket reports IPv4 peers) is held as
/// IPv4, so `127.0.0.1` and `::ffff:127.0.0.1` are the same address.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// IPv6 bytes; for IPv4, the mapped form `::ffff:a.b.c.d`.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF }
    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        isIPv4 ? bytes[12] == 127 : (bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1)
    }

    /// Parses a numeric address: `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`.
    /// No host names, no ports, no zone ids.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let b = withUnsafeBytes(of: &v4) { Array($0) }
            bytes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + b
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses an address that may carry a port: `192.0.2.1:8080`,
    /// `[2001:db8::1]:443`, or a bare address.
    public init?(withOptionalPort text: some StringProtocol) {
        if let a = IPAddress(text) { self = a; return }
        let s = String(text)
        guard let colon = s.lastIndex(of: ":"), s[s.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
        let host = s[..<colon]
        // A bare IPv6 address was handled above; with a port it must be bracketed.
        guard !host.contains(":") || host.hasPrefix("[") else { return nil }
        guard let a = IPAddress(host) else { return nil }
        self = a
    }

    /// Whether the first `bits` bits equal `other`'s (bits counted on the 16-byte form).
    func matches(_ other: IPAddress, bits: Int) -> Bool {
        let whole = bits / 8, rest = bits % 8
        if bytes[0..<whole] != other.bytes[0..<whole] { return false }
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - rest)
        return bytes[whole] & mask == other.bytes[whole] & mask
    }

    /// The address with every bit after the first `bits` (on the 16-byte form) cleared.
    public func masked(bits: Int) -> IPAddress {
        var out = bytes
        for i in 0..<16 {
            let keep = max(0, min(8, bits - i * 8))
            out[i] &= keep == 8 ? 0xFF : ~(UInt8(0xFF) >> keep)
        }
        return IPAddress(bytes: out)
    }

    /// The conventional text: dotted quad for IPv4, RFC 5952 for IPv6.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if isIPv4 {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12..<16]) }
            inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count))
        }
        return String(cString: buffer)
    }
}
