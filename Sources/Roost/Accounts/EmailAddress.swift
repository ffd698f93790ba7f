/// Email addresses as accounts store them: trimmed and lower-cased (so
/// `Ann@Example.org` and `ann@example.org` are one account), and only the
/// plain `local@domain.tld` form with printable ASCII: nothing that could
/// break out of a mail header or an SMTP command. openapi.yaml's
/// `EmailAddress` schema is this rule as a pattern (at most 254 characters
/// as sent, spaces and tabs around it included).
enum EmailAddress {
    static let maxLength = 254

    static func normalised(_ text: String) -> String? {
        guard text.utf8.count <= maxLength else { return nil }
        // Checked byte by byte before lower-casing: no Unicode letter lower-cases into the rule.
        let bytes = Array(text.trimmingSpaces.utf8)
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")) else { return nil }
        let (local, domain) = (bytes[..<at], bytes[(at + 1)...])
        guard (1...64).contains(local.count), local.allSatisfy(isLocal),
              domain.allSatisfy(isDomain), domain.contains(UInt8(ascii: ".")), domain.first != UInt8(ascii: "."),
              domain.last != UInt8(ascii: "."), !zip(domain, domain.dropFirst()).contains(where: { $0 == UInt8(ascii: ".") && $1 == $0 })
        else { return nil }
        return String(decoding: bytes, as: UTF8.self).lowercased()
    }

    private static func isLetterOrDigit(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }

    private static let localSymbols = Set("!#$%&'*+-/=?^_`{|}~.".utf8)

    private static func isLocal(_ b: UInt8) -> Bool { isLetterOrDigit(b) || localSymbols.contains(b) }

    private static func isDomain(_ b: UInt8) -> Bool { isLetterOrDigit(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") }
}
