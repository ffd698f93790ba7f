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

    static func of(_ segments: [String]) -> String {
        guard let first = segments.first else { return "/" }
        if let known = fixed[first] {
            switch segments.count {
            case 1: return known.one
            case 2: return segments[1] == "me" && first == "users" ? "/users/me"
                : segments[1] == "_count" ? known.one + "/_count" : known.two
            default: return known.deeper
            }
        }
        if first.hasPrefix("_") { return "/_reserved" }
        switch segments.count {
        case 1: return "/:collection"
        case 2: return segments[1] == "_count" ? "/:collection/_count" : "/:collection/:id"
        default: return "/:collection/*"
        }
    }
}
