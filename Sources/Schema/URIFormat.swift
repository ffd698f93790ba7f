/// `uri`: an absolute URI by RFC 3986's grammar (scheme, optional authority,
/// path, query, fragment; percent-escapes well formed; ASCII only).
enum URIFormat {
    static func isURI(_ s: [UInt8]) -> Bool {
        guard let colon = s.firstIndex(of: UInt8(ascii: ":")), colon > 0, isAlpha(s[0]),
              s[1..<colon].allSatisfy({ isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return false }
        var rest = s[(colon + 1)...]
        var fragment: ArraySlice<UInt8>?
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) {
            fragment = rest[(hash + 1)...]
            rest = rest[..<hash]
        }
        var query: ArraySlice<UInt8>?
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            query = rest[(question + 1)...]
            rest = rest[..<question]
        }
        if rest.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            guard isAuthority(rest[..<end]) else { return false }
            rest = rest[end...]
        }
        guard matches(rest, extra: "/:@") else { return false }
        if let query, !matches(query, extra: "/?:@") { return false }
        if let fragment, !matches(fragment, extra: "/?:@") { return false }
        return true
    }

    /// `[userinfo@]host[:port]`.
    static func isAuthority(_ a: ArraySlice<UInt8>) -> Bool {
        var hostPort = a
        if let at = a.lastIndex(of: UInt8(ascii: "@")) {
            guard matches(a[..<at], extra: ":") else { return false }
            hostPort = a[(at + 1)...]
        }
        var host = hostPort
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")),
                  IPAddress.isIPv6(hostPort[(hostPort.startIndex + 1)..<close]) else { return false }
            host = hostPort[...close]
            let after = hostPort[(close + 1)...]
            if after.isEmpty { return true }
            guard after.first == UInt8(ascii: ":") else { return false }
            return after.dropFirst().allSatisfy(isDigit)
        }
        if let colon = hostPort.lastIndex(of: UInt8(ascii: ":")) {
            guard hostPort[(colon + 1)...].allSatisfy(isDigit) else { return false }
            host = hostPort[..<colon]
        }
        return matches(host, extra: "")
    }

    /// Unreserved, sub-delims, well-formed %XX, and the `extra` characters.
    static func matches(_ s: ArraySlice<UInt8>, extra: StaticString) -> Bool {
        var i = s.startIndex
        while i < s.endIndex {
            let b = s[i]
            if b == UInt8(ascii: "%") {
                guard i + 2 < s.endIndex,
                      JSONPointer.hexValue(s[i + 1]) != nil, JSONPointer.hexValue(s[i + 2]) != nil else { return false }
                i += 3
                continue
            }
            guard isUnreserved(b) || isSubDelim(b) || contains(extra, b) else { return false }
            i += 1
        }
        return true
    }

    private static func contains(_ set: StaticString, _ b: UInt8) -> Bool {
        UnsafeBufferPointer(start: set.utf8Start, count: set.utf8CodeUnitCount).contains(b)
    }

    static func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    static func isUnreserved(_ b: UInt8) -> Bool {
        isAlpha(b) || isDigit(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~")
    }
    static func isSubDelim(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): return true
        default: return false
        }
    }
}

/// IPv4 and IPv6 text forms, for URI hosts and e-mail address literals.
enum IPAddress {
    /// Dotted decimal, four parts 0-255, no leading zeros.
    static func isIPv4(_ s: ArraySlice<UInt8>) -> Bool {
        let parts = s.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(URIFormat.isDigit) else { return false }
            if part.count > 1 && part.first == UInt8(ascii: "0") { return false }
            guard Int(String(decoding: part, as: UTF8.self))! <= 255 else { return false }
        }
        return true
    }

    /// Eight groups of 1-4 hex digits, one "::" for a run of zero groups, and
    /// an IPv4 address as the last two groups.
    static func isIPv6(_ s: ArraySlice<UInt8>) -> Bool {
        let text = Array(s)
        guard !text.isEmpty else { return false }
        var halves: [ArraySlice<UInt8>] = []
        var i = 0, start = 0
        while i < text.count {
            if text[i] == UInt8(ascii: ":"), i + 1 < text.count, text[i + 1] == UInt8(ascii: ":") {
                halves.append(text[start..<i])
                i += 2
                start = i
                guard halves.count == 1 else { return false }
                continue
            }
            i += 1
        }
        halves.append(text[start...])
        var groups = 0
        for (h, half) in halves.enumerated() where !half.isEmpty {
            let parts = half.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            for (p, part) in parts.enumerated() {
                if p == parts.count - 1, h == halves.count - 1, part.contains(UInt8(ascii: ".")) {
                    guard isIPv4(part) else { return false }
                    groups += 2
                } else {
                    guard (1...4).contains(part.count), part.allSatisfy({ JSONPointer.hexValue($0) != nil }) else { return false }
                    groups += 1
                }
            }
        }
        return halves.count == 2 ? groups < 8 : groups == 8
    }
}
