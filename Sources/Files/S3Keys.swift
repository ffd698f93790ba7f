/// Object keys in the bucket, all under the optional prefix:
///
/// ```
/// <prefix>/<id>/original              the uploaded bytes
/// <prefix>/<id>/thumb/<variant>.<ext> its thumbnails
/// ```
///
/// One folder-like group per file, so deleting a file or sweeping an orphan
/// is one listing of `<prefix>/<id>/`. Ids are server-made 24-hex strings and
/// variant names are server-made too, so keys never hold client text.
public struct S3Keys: Sendable, Equatable {
    /// Empty, or the prefix followed by `/`.
    public let root: String

    public init(prefix: String) {
        let trimmed = prefix.split(separator: "/").joined(separator: "/")
        root = trimmed.isEmpty ? "" : trimmed + "/"
    }

    public func original(_ id: String) -> String { root + id + "/original" }
    public func thumbnails(_ id: String) -> String { root + id + "/thumb/" }
    public func thumbnail(_ id: String, name: String) -> String { thumbnails(id) + name }
    public func file(_ id: String) -> String { root + id + "/" }

    /// The file id a key under `root` belongs to, or nil for keys Roost did not make.
    public func id(of key: String) -> String? {
        guard key.hasPrefix(root) else { return nil }
        let rest = key.dropFirst(root.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let id = String(rest[..<slash])
        return FileLayout.isValidID(id) ? id : nil
    }

    /// Bucket names S3 accepts: 3–63 of `a-z 0-9 . -`, starting and ending with a letter or digit.
    public static func isValidBucket(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard (3...63).contains(u.count) else { return false }
        func alnum(_ c: UInt8) -> Bool { (c >= 97 && c <= 122) || (c >= 48 && c <= 57) }
        guard alnum(u.first!), alnum(u.last!) else { return false }
        return u.allSatisfy { alnum($0) || $0 == 45 || $0 == 46 }
    }

    /// Percent-encodes a key or query value for a URL (RFC 3986 unreserved
    /// kept; `/` kept in keys, where it separates path segments).
    public static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "-._~".contains(c) || (keepSlash && byte == 0x2F) {
                out.append(c)
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
