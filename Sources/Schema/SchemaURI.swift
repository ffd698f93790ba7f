/// URI references resolved against a base (RFC 3986 §5.2), for `$id` and `$ref`.
/// Only what naming places inside one schema document needs: no normalisation
/// beyond removing dot segments, no network.
struct SchemaURI: Equatable {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    /// Splits a URI reference into its five parts (RFC 3986 appendix B).
    init(parsing text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"),
           let first = rest.first, first.isASCII, first.isLetter,
           rest[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }) {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    private init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// The text of this URI.
    var text: String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// This URI without its fragment.
    var withoutFragment: SchemaURI {
        var copy = self
        copy.fragment = nil
        return copy
    }

    /// `reference` resolved against this base (RFC 3986 §5.2.2).
    func resolving(_ reference: String) -> SchemaURI {
        let r = SchemaURI(parsing: reference)
        if r.scheme != nil {
            return SchemaURI(scheme: r.scheme, authority: r.authority, path: Self.removingDotSegments(r.path), query: r.query, fragment: r.fragment)
        }
        if r.authority != nil {
            return SchemaURI(scheme: scheme, authority: r.authority, path: Self.removingDotSegments(r.path), query: r.query, fragment: r.fragment)
        }
        if r.path.isEmpty {
            return SchemaURI(scheme: scheme, authority: authority, path: path, query: r.query ?? query, fragment: r.fragment)
        }
        if r.path.hasPrefix("/") {
            return SchemaURI(scheme: scheme, authority: authority, path: Self.removingDotSegments(r.path), query: r.query, fragment: r.fragment)
        }
        let merged: String
        if authority != nil && path.isEmpty {
            merged = "/" + r.path
        } else if let slash = path.lastIndex(of: "/") {
            merged = String(path[...slash]) + r.path
        } else {
            merged = r.path
        }
        return SchemaURI(scheme: scheme, authority: authority, path: Self.removingDotSegments(merged), query: r.query, fragment: r.fragment)
    }

    /// RFC 3986 §5.2.4.
    static func removingDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") { input = input.dropFirst(3) }
            else if input.hasPrefix("./") { input = input.dropFirst(2) }
            else if input.hasPrefix("/./") { input = input.dropFirst(2) }
            else if input == "/." { input = "/" }
            else if input.hasPrefix("/../") { input = input.dropFirst(3); dropLastSegment(&output) }
            else if input == "/.." { input = "/"; dropLastSegment(&output) }
            else if input == "." || input == ".." { input = "" }
            else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    private static func dropLastSegment(_ output: inout [Substring]) {
        if !output.isEmpty { output.removeLast() }
    }
}
