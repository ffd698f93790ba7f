/// Decides between HTML and JSON from an `Accept` header.
public enum ContentNegotiation {
    /// True when `accept` rates `text/html` strictly above `application/json`.
    /// JSON wins ties, so API clients and `*/*` get JSON.
    public static func prefersHTML(_ accept: String?) -> Bool {
        guard let accept else { return false }
        var html = 0.0, json = 0.0
        for part in accept.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingSpaces }
            guard let type = pieces.first?.lowercased() else { continue }
            var q = 1.0
            for p in pieces.dropFirst() where p.hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
            switch type {
            case "text/html": html = max(html, q)
            case "application/json": json = max(json, q)
            case "*/*", "text/*": html = max(html, q * 0.5); if type == "*/*" { json = max(json, q * 0.5) }
            case "application/*": json = max(json, q * 0.5)
            default: continue
            }
        }
        return html > json
    }

    /// The media type of a `Content-Type` value, lower-cased, without parameters.
    public static func mediaType(_ contentType: String?) -> String? {
        guard let contentType, !contentType.isEmpty else { return nil }
        // Runs on the event loop for every body: one scan, and a lower-cased copy only when needed.
        let type = contentType.prefix { $0 != ";" }.trimmingSpaces
        return type.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } ? type.lowercased() : type
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (header values).
    public var trimmingSpaces: String {
        var s = self[...]
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
