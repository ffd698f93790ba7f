import Foundation

/// Just enough of S3's XML answers: the text of named elements (listings,
/// errors, multipart ids). S3 answers are flat and machine-made, so a scan
/// for `<Name>…</Name>` suffices; Foundation's XML parser would load libxml2
/// at start-up.
enum S3XML {
    /// The text of every `<name>` element, in order, entities decoded.
    static func values(_ name: String, in text: String) -> [String] {
        var out: [String] = []
        let open = "<" + name + ">", close = "</" + name + ">"
        var rest = text[...]
        while let start = rest.range(of: open) {
            guard let end = rest.range(of: close, range: start.upperBound..<rest.endIndex) else { break }
            out.append(decode(String(rest[start.upperBound..<end.lowerBound])))
            rest = rest[end.upperBound...]
        }
        return out
    }

    static func value(_ name: String, in text: String) -> String? { values(name, in: text).first }

    /// The `<Contents>` entries of a ListObjectsV2 page: key and last-modified time.
    static func listing(_ text: String) -> [(key: String, modified: Date)] {
        values("Contents", in: text).compactMap { entry in
            guard let key = value("Key", in: entry) else { return nil }
            return (key, value("LastModified", in: entry).flatMap(date) ?? .distantPast)
        }
    }

    /// S3's timestamps: `2026-11-24T05:30:00.000Z` (fraction optional).
    static func date(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The CompleteMultipartUpload body for parts numbered from 1.
    static func completion(etags: [String]) -> String {
        var xml = "<CompleteMultipartUpload>"
        for (index, etag) in etags.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(escape(etag))</ETag></Part>"
        }
        return xml + "</CompleteMultipartUpload>"
    }
}
