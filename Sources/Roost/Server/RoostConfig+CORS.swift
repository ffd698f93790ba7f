import HTTP

extension RoostConfig {
    /// The `cors:` mapping of the config file; its members are the `cors_*` settings.
    mutating func applyCORS(_ value: Any, source: String) throws {
        guard let map = value as? [String: Any] else { throw Invalid("\(source): cors must be a mapping (origins, credentials)") }
        for (key, v) in map {
            guard ["origins", "credentials"].contains(key) else {
                throw Invalid("\(source): cors: unknown setting \"\(key)\" (use origins, credentials)")
            }
            try set("cors_" + key, v, source: source)
        }
    }

    /// `*`, or an origin as a browser sends it: `scheme://host[:port]`, no path.
    static func corsOrigin(_ text: String, source: String) throws -> String {
        if text == "*" { return text }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), parts.count == 3 || (parts.count == 4 && parts[3].isEmpty),
              !parts[2].isEmpty, !text.contains(where: { $0 == " " || $0 == "*" }) else {
            throw Invalid("\(source): cors.origins: \"\(text)\" is not an origin (use * or scheme://host[:port], e.g. http://localhost:5173)")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// The policy the HTTP server applies; nil when `cors.origins` is empty (no CORS).
    public func corsPolicy() throws -> CORSPolicy? {
        if corsCredentials && corsOrigins.contains("*") {
            throw Invalid("cors.credentials: true needs the allowed origins listed: with \"*\" any web site could send requests with the visitor's credentials")
        }
        return CORSPolicy(origins: corsOrigins, credentials: corsCredentials)
    }
}
