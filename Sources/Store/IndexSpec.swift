/// An index an operator declares on a collection, e.g. `name` or `location:geo`.
public struct IndexSpec: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable { case value, geo }
    public let path: String
    public let kind: Kind

    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }

    /// Parses `field` or `field:geo`.
    public init(parsing text: String) throws(QueryError) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        let path = try FieldPath(parts.first ?? "")
        switch parts.count > 1 ? parts[1] : "value" {
        case "value": self.init(path: path.description, kind: .value)
        case "geo", "2dsphere", "2d": self.init(path: path.description, kind: .geo)
        default: throw .invalid("Index \"\(text)\": the kind after ':' must be geo.")
        }
    }

    public var description: String { kind == .geo ? "\(path):geo" : path }
}
