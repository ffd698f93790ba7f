import HTTP

/// Maps a request path to its route template for metrics (`/:collection/:id`),
/// so raw paths (ids, collection names) never become label values. Returns
/// constant strings: no allocation per request.
enum RouteTemplate {
    /// Roost's own first segments; anything else is a collection.
    private static let fixed: [String: (one: String, two: String, deeper: String)] = {
        var map: [String: (String, String, String)] = [:]
        for name in CollectionName.reserved {
            map[name] = ("/\(name)", "/\(name)/:id", "/\(name)/*")
        }
        map["users"] = ("/users", "/users/:id", "/users/*")
        return map
    }()

    /// The collection's own endpoints (`_count`, `_deltaset`, `_live`): constant strings per base.
    private static let subs: [String: [String: String]] = {
        var map: [String: [String: String]] = [:]
        for base in ["/:collection"] + CollectionName.reserved.map { "/\($0)" } + ["/users"] {
            map[base] = Dictionary(uniqueKeysWithValues: ["_count", "_deltaset", "_live"].map { ($0, base + "/" + $0) })
        }
        return map
    }()

    private static func sub(_ name: String, _ base: String) -> String? { subs[base]?[name] }

    static func of(_ segments: [String]) -> String {
        guard let first = segments.first else { return "/" }
        if let known = fixed[first] {
            switch segments.count {
            case 1: return known.one
            case 2:
                if segments[1] == "me" && first == "users" { return "/users/me" }
                return sub(segments[1], known.one) ?? known.two
            default: return known.deeper
            }
        }
        if first == "_batch" && segments.count == 1 { return "/_batch" }
        if first == "openapi.yaml" && segments.count == 1 { return "/openapi.yaml" }
        if first == "_" { return "/_/*" }
        if first.hasPrefix("_") { return "/_reserved" }
        switch segments.count {
        case 1: return "/:collection"
        case 2: return sub(segments[1], "/:collection") ?? "/:collection/:id"
        default: return "/:collection/*"
        }
    }
}
