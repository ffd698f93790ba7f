/// `email`: RFC 5321's `Mailbox`, ASCII only: a dot-atom or quoted local part,
/// then a host name or an address literal (`[192.0.2.1]`, `[IPv6:…]`).
enum EmailFormat {
    static func isEmail(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let at = s.lastIndex(of: UInt8(ascii: "@")), at > 0, at < s.count - 1 else { return false }
        return isLocalPart(s[..<at]) && isDomain(s[(at + 1)...])
    }

    static func isLocalPart<Bytes: RandomAccessCollection<UInt8>>(_ s: Bytes) -> Bool where Bytes.Index == Int {
        guard s.count <= 64 else { return false }
        if s.first == UInt8(ascii: "\"") {
            guard s.count >= 2, s.last == UInt8(ascii: "\"") else { return false }
            var i = s.startIndex + 1
            while i < s.endIndex - 1 {
                let b = s[i]
                if b == UInt8(ascii: "\\") {
                    guard i + 1 < s.endIndex - 1, (0x20...0x7E).contains(s[i + 1]) else { return false }
                    i += 2
                    continue
                }
                guard (0x20...0x7E).contains(b), b != UInt8(ascii: "\"") else { return false }
                i += 1
            }
            return true
        }
        // A dot-atom: atoms of atext separated by single dots (no split: this runs on every write).
        var atomLength = 0
        for b in s {
            if b == UInt8(ascii: ".") {
                guard atomLength > 0 else { return false }
                atomLength = 0
            } else {
                guard isAtomText(b) else { return false }
                atomLength += 1
            }
        }
        return atomLength > 0
    }

    static func isAtomText(_ b: UInt8) -> Bool {
        if URIFormat.isAlpha(b) || URIFormat.isDigit(b) { return true }
        switch b {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "/"),
             UInt8(ascii: "="), UInt8(ascii: "?"), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
             UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static func isDomain(_ s: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        if s.first == UInt8(ascii: "[") {
            guard s.last == UInt8(ascii: "]"), s.count > 2 else { return false }
            let inner = Array(s[(s.startIndex + 1)..<(s.endIndex - 1)])[...]
            let ipv6Tag = Array("IPv6:".utf8)
            if inner.starts(with: ipv6Tag) { return IPAddress.isIPv6(inner.dropFirst(ipv6Tag.count)) }
            return IPAddress.isIPv4(inner)
        }
        return isHostName(s)
    }

    /// Labels of letters, digits and inner hyphens, 1-63 bytes each, 253 in all.
    static func isHostName<Bytes: Collection<UInt8>>(_ s: Bytes) -> Bool {
        guard !s.isEmpty, s.count <= 253 else { return false }
        var labelLength = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for b in s {
            if b == UInt8(ascii: ".") {
                guard (1...63).contains(labelLength), previous != UInt8(ascii: "-") else { return false }
                labelLength = 0
            } else {
                let allowed = URIFormat.isAlpha(b) || URIFormat.isDigit(b) || (b == UInt8(ascii: "-") && labelLength > 0)
                guard allowed else { return false }
                labelLength += 1
            }
            previous = b
        }
        return (1...63).contains(labelLength) && previous != UInt8(ascii: "-")
    }
}
