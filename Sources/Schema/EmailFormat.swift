/// `email`: RFC 5321's `Mailbox`, ASCII only: a dot-atom or quoted local part,
/// then a host name or an address literal (`[192.0.2.1]`, `[IPv6:…]`).
enum EmailFormat {
    static func isEmail(_ s: [UInt8]) -> Bool {
        guard let at = s.lastIndex(of: UInt8(ascii: "@")), at > 0, at < s.count - 1 else { return false }
        return isLocalPart(s[..<at]) && isDomain(s[(at + 1)...])
    }

    static func isLocalPart(_ s: ArraySlice<UInt8>) -> Bool {
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
        let atoms = s.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return atoms.allSatisfy { !$0.isEmpty && $0.allSatisfy(isAtomText) }
    }

    static func isAtomText(_ b: UInt8) -> Bool {
        if URIFormat.isAlpha(b) || URIFormat.isDigit(b) { return true }
        return "!#$%&'*+-/=?^_`{|}~".utf8.contains(b)
    }

    static func isDomain(_ s: ArraySlice<UInt8>) -> Bool {
        if s.first == UInt8(ascii: "[") {
            guard s.last == UInt8(ascii: "]"), s.count > 2 else { return false }
            let inner = s[(s.startIndex + 1)..<(s.endIndex - 1)]
            let ipv6Tag = Array("IPv6:".utf8)
            if inner.starts(with: ipv6Tag) { return IPAddress.isIPv6(inner.dropFirst(ipv6Tag.count)) }
            return IPAddress.isIPv4(inner)
        }
        return isHostName(s)
    }

    /// Labels of letters, digits and inner hyphens, 1-63 bytes each, 253 in all.
    static func isHostName(_ s: ArraySlice<UInt8>) -> Bool {
        guard !s.isEmpty, s.count <= 253 else { return false }
        return s.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { label in
            guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else { return false }
            return label.allSatisfy { URIFormat.isAlpha($0) || URIFormat.isDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }
}
