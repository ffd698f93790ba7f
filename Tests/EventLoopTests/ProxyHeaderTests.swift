import EventLoop
import Testing

/// What a PROXY listener makes of the first bytes of a connection.
@Suite struct ProxyHeaderTests {
    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// A v2 header: command byte, family byte, then `body` (addresses, TLVs).
    static func v2(_ command: UInt8, _ family: UInt8, _ body: [UInt8]) -> [UInt8] {
        signature + [command, family, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    static let v4Body: [UInt8] = [203, 0, 113, 7, 10, 0, 0, 1, 0xC8, 0x32, 0x01, 0xBB]
    static let v6Body: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [9]
        + [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1] + [0x04, 0xD2, 0x01, 0xBB]

    @Test(arguments: [
        ("PROXY TCP4 203.0.113.7 10.0.0.1 51234 443\r\nGET / HTTP/1.1\r\n", ProxyHeader.header(length: 43, client: "203.0.113.7")),
        ("PROXY TCP6 2001:db8::9 2001:db8::1 1234 443\r\n", .header(length: 45, client: "2001:db8::9")),
        ("PROXY UNKNOWN\r\n", .header(length: 15, client: nil)),
        ("PROXY UNKNOWN whatever follows\r\n", .header(length: 32, client: nil)),
        // Partial: more bytes may come.
        ("", .incomplete), ("PRO", .incomplete), ("PROXY TCP4 203.0.113.7 10.0", .incomplete),
        // Malformed: closed at once.
        ("GET / HTTP/1.1\r\n", .invalid), ("PROXX", .invalid),
        ("PROXY TCP4 203.0.113.7 10.0.0.1 51234 443\n", .invalid),
        ("PROXY TCP4 203.0.113.7 10.0.0.1 51234\r\n", .invalid),
        ("PROXY TCP4 203.0.113.7 10.0.0.1 51234 443 9\r\n", .invalid),
        ("PROXY TCP4 203.0.113.7  10.0.0.1 51234 443\r\n", .invalid),
        ("PROXY TCP4 2001:db8::9 10.0.0.1 51234 443\r\n", .invalid),
        ("PROXY TCP6 203.0.113.7 2001:db8::1 1 2\r\n", .invalid),
        ("PROXY TCP4 203.0.113.07 10.0.0.1 51234 443\r\n", .invalid),
        ("PROXY TCP4 203.0.113.7 10.0.0.1 65536 443\r\n", .invalid),
        ("PROXY TCP4 203.0.113.7 10.0.0.1 -1 443\r\n", .invalid),
        ("PROXY TCP4 203.0.113.7 10.0.0.1 0443 443\r\n", .invalid),
        ("PROXY UDP4 203.0.113.7 10.0.0.1 1 2\r\n", .invalid),
        ("PROXY TCP4 203.0.113.7\u{7F} 10.0.0.1 1 2\r\n", .invalid),
        ("PROXY " + String(repeating: "A", count: 120), .invalid),
    ] as [(String, ProxyHeader)])
    func version1(text: String, expected: ProxyHeader) {
        #expect(ProxyHeader.parse(Array(text.utf8)) == expected)
    }

    @Test(arguments: [
        (v2(0x21, 0x11, v4Body) + Array("GET".utf8), ProxyHeader.header(length: 28, client: "203.0.113.7")),
        (v2(0x21, 0x21, v6Body), .header(length: 52, client: "2001:db8::9")),
        // TLVs after the addresses are skipped.
        (v2(0x21, 0x11, v4Body + [0x01, 0x00, 0x02, 0x68, 0x32]), .header(length: 33, client: "203.0.113.7")),
        // LOCAL (a health check) and unspecified or Unix families name no client.
        (v2(0x20, 0x00, []), .header(length: 16, client: nil)),
        (v2(0x21, 0x00, []), .header(length: 16, client: nil)),
        (v2(0x21, 0x31, [UInt8](repeating: 0, count: 216)), .header(length: 232, client: nil)),
        // Partial.
        (Array(signature.prefix(5)), .incomplete), (Array(v2(0x21, 0x11, v4Body).prefix(20)), .incomplete),
        // Malformed.
        (v2(0x11, 0x11, v4Body), .invalid), (v2(0x22, 0x11, v4Body), .invalid), (v2(0x21, 0x41, v4Body), .invalid),
        (v2(0x21, 0x13, v4Body), .invalid), (v2(0x21, 0x11, Array(v4Body.prefix(8))), .invalid),
        (v2(0x21, 0x21, v4Body), .invalid), (Array(signature.prefix(11)) + [0x0B], .invalid),
        (signature + [0x21, 0x11, 0x10, 0x00], .invalid),
    ] as [([UInt8], ProxyHeader)])
    func version2(bytes: [UInt8], expected: ProxyHeader) {
        #expect(ProxyHeader.parse(bytes) == expected)
    }
}
