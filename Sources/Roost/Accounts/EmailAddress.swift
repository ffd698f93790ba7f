/// Email addresses as accounts store them: trimmed and lower-cased (so
/// `Ann@Example.org` and `ann@example.org` are one account), and only the
/// plain `local@domain.tld` form with printable ASCII: nothing that could
/// break out of a mail header or an SMTP command.
enum EmailAddress {
    static let maxLength = 254

    static func normalised(_ text: String) -> String? {
        let trimmed = text.trimmingSpaces.lowercased()
        guard (3...maxLength).contains(trimmed.utf8.count) else { return nil }
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let local = parts.first, let domain = parts.last,
              (1...64).contains(local.utf8.count), domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."),
              !domain.contains("..") else { return nil }
        let allowedLocal: (UInt8) -> Bool = { b in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            default: return Array("!#$%&'*+-/=?^_`{|}~.".utf8).contains(b)
            }
        }
        let allowedDomain: (UInt8) -> Bool = { b in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): return true
            default: return false
            }
        }
        guard local.utf8.allSatisfy(allowedLocal), domain.utf8.allSatisfy(allowedDomain) else { return nil }
        return trimmed
    }
}
