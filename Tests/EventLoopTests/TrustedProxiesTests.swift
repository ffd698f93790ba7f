import HTTP
import Testing

/// Which address a request's client has, given the peer and its headers.
@Suite struct TrustedProxiesTests {
    static let proxies = try! TrustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"])

    @Test(arguments: [
        // (peer, X-Forwarded-For fields, client)
        ("127.0.0.1", [], "127.0.0.1"),
        ("127.0.0.1", ["203.0.113.7"], "203.0.113.7"),
        ("127.0.0.1", ["6.6.6.6, 203.0.113.7"], "203.0.113.7"),
        ("127.0.0.1", ["6.6.6.6", "203.0.113.7, 10.0.0.9"], "203.0.113.7"),
        ("::ffff:127.0.0.1", ["203.0.113.7:51234"], "203.0.113.7"),
        ("127.0.0.1", ["[2001:db8::1]:443"], "2001:db8::1"),
        ("127.0.0.1", ["2001:DB8:0::1"], "2001:db8::1"),
        ("127.0.0.1", ["10.1.1.1, fd12::3"], "10.1.1.1"),
        ("127.0.0.1", ["6.6.6.6, unknown"], "127.0.0.1"),
        ("127.0.0.1", ["6.6.6.6, 10.0.0.2, unknown, 10.0.0.3"], "10.0.0.3"),
        ("127.0.0.1", [""], "127.0.0.1"),
        // Untrusted peers are never believed.
        ("192.0.2.1", ["203.0.113.7"], "192.0.2.1"),
        ("127.0.0.2", ["203.0.113.7"], "127.0.0.2"),
    ] as [(String, [String], String)])
    func xForwardedFor(peer: String, fields: [String], client: String) {
        let headers = Headers(fields.map { ("X-Forwarded-For", $0) })
        #expect(Self.proxies.clientAddress(peer: peer, headers: headers) == client)
    }

    @Test(arguments: [
        ("for=203.0.113.7", "203.0.113.7"),
        ("for=6.6.6.6, for=\"[2001:db8::17]:4711\";proto=https", "2001:db8::17"),
        ("For=\"203.0.113.7\";by=10.0.0.1, for=10.0.0.4", "203.0.113.7"),
        ("for=6.6.6.6, proto=https", "127.0.0.1"),
        ("for=_hidden", "127.0.0.1"),
    ] as [(String, String)])
    func forwarded(value: String, client: String) throws {
        let p = try TrustedProxies(["127.0.0.1", "10.0.0.0/8"], header: .forwarded)
        let headers = Headers([("Forwarded", value), ("X-Forwarded-For", "9.9.9.9")])
        #expect(p.clientAddress(peer: "127.0.0.1", headers: headers) == client)
    }

    @Test func withoutProxiesThePeerIsTheClient() {
        #expect(TrustedProxies.none.clientAddress(peer: "192.0.2.1", headers: Headers([("X-Forwarded-For", "6.6.6.6")])) == "192.0.2.1")
    }

    @Test(arguments: ["nonsense", "10.0.0.0/33", "::/129", "10.0.0.0/x", "example.org"])
    func badEntriesAreRefused(entry: String) {
        #expect(throws: TrustedProxies.Invalid.self) { try TrustedProxies([entry]) }
    }

    @Test(arguments: [
        ("192.0.2.1", 128, "192.0.2.1"),
        ("2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::"),
        ("2001:db8:1:2:3:4:5:6", 60, "2001:db8:1::"),
    ] as [(String, Int, String)])
    func masking(address: String, bits: Int, expected: String) {
        #expect(IPAddress(address)?.masked(bits: bits).description == expected)
    }
}
