/// One step of a path into a JSON document.
public enum PathStep: Sendable, Equatable {
    case key(String)
    case index(Int)
}

/// A dotted field path such as `address.city` or `dim_cm.1`, validated: at
/// most `QueryLimits.maxPathParts` parts, none empty or starting with `$`.
public struct FieldPath: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let components: [String]

    public init(_ dotted: String) throws(QueryError) {
        let parts = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !dotted.isEmpty, parts.allSatisfy({ !$0.isEmpty }) else {
            throw .invalid("The field path \"\(dotted)\" is empty or has an empty component.")
        }
        guard parts.count <= QueryLimits.maxPathParts else {
            throw .invalid("The field path \"\(QueryLimits.excerpt(dotted))\" has \(parts.count) parts; at most \(QueryLimits.maxPathParts) are allowed.")
        }
        for p in parts {
            if p.hasPrefix("$") { throw .invalid("The field path \"\(dotted)\" has a component starting with '$'.") }
            if p.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || $0.value < 0x20 }) {
                throw .invalid("The field path \"\(dotted)\" contains a quote, backslash or control character.")
            }
        }
        components = parts
    }

    public var description: String { components.joined(separator: ".") }

    /// True when a component is all digits: it may index an array.
    package static func isArrayIndex(_ component: String) -> Bool {
        !component.isEmpty && component.count <= 9 && component.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }
}
