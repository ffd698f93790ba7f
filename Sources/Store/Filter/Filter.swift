import JSON

/// A filter parsed and validated once: the one tree that `FilterCompiler`
/// renders to SQL (through an engine's `SQLDialect`) and `FilterMatcher`
/// evaluates in memory, so lists, counts, live streams, silent pushes and
/// access rules all read a filter the same way.
///
/// Parsing makes every refusal a client can meet (`QueryError`, with its
/// sentence): unknown operators, bad arguments, paths, depth, the number of
/// conditions, regular expressions that do not compile. What remains for
/// rendering is only what an engine cannot do (a geo shape PostgreSQL lacks).
///
/// ```swift
/// let filter = try Filter(json(#"{"tags": "red", "n": {"$gt": 2}}"#))
/// let sql = try FilterCompiler(dialect: SQLiteDialect()).compile(filter)
/// let live = try FilterMatcher(filter)
/// ```
public struct Filter: Sendable {
    /// The top-level conditions; all must hold. Empty matches every document.
    public let clauses: [Clause]
    /// Conditions, as `QueryLimits.maxConditions` counts them.
    public let conditions: Int

    /// `{}` (or only `$comment`): every document matches.
    public var matchesAll: Bool { clauses.isEmpty }

    /// The filter that matches every document.
    public static let everything = Filter(clauses: [], conditions: 0)

    init(clauses: [Clause], conditions: Int) {
        self.clauses = clauses
        self.conditions = conditions
    }

    /// Parses `json`, which must be a JSON object (an empty one matches all).
    public init(_ json: JSONValue) throws(QueryError) {
        var parser = FilterParser()
        self = try parser.parse(json)
    }

    /// A condition on the document (or, inside `$elemMatch`, on an element).
    public indirect enum Clause: Sendable {
        /// `$and`, `$or` or `$nor` over sub-filters (each an AND of its clauses).
        case group(Group, [[Clause]])
        /// `field: value`, an implicit `$eq`.
        case equals(FieldPath, JSONValue)
        /// `field: {"$op": …, …}`: every operator holds on the field.
        case field(FieldPath, [Operator])
    }

    public enum Group: Sendable { case and, or, nor }

    /// One operator of an operator object, its argument validated.
    public indirect enum Operator: Sendable {
        case eq(JSONValue)
        case ne(JSONValue)
        /// The literal is a number, string, bool or null.
        case compare(Comparison, JSONValue)
        /// `$in` (or, negated, `$nin`), at most `QueryLimits.maxListValues` values.
        case oneOf([JSONValue], negated: Bool)
        case exists(Bool)
        /// `$not` over an operator object.
        case not([Operator])
        /// `$all`: every entry holds on the field.
        case all([AllEntry])
        case size(Int64)
        case elemMatch(ElementCondition)
        /// A pattern `RegexFunction.validate` accepted, with flags from `imsx`.
        case regex(source: String, flags: String)
        case mod(divisor: Int64, remainder: Int64)
        case type([TypeClass])
        case geoWithin(GeoShape)
        case nearSphere(NearSphere)
    }

    public enum Comparison: String, Sendable {
        case gt = "$gt", gte = "$gte", lt = "$lt", lte = "$lte"

        public var sqlOperator: String {
            switch self {
            case .gt: return ">"
            case .gte: return ">="
            case .lt: return "<"
            case .lte: return "<="
            }
        }

        var isLower: Bool { self == .gt || self == .gte }
    }

    /// An entry of `$all`: a value the field holds, or an operator object
    /// led by `$elemMatch`.
    public enum AllEntry: Sendable {
        case value(JSONValue)
        case operators([Operator])
    }

    /// `$elemMatch`'s two forms: operators on the element itself
    /// (`{"$gt": 2}`), or a filter on an element that is a document.
    public enum ElementCondition: Sendable {
        case operators([Operator])
        case document([Clause])
    }

    /// The value classes `$type` names (BSON names and numbers read as Roost stores them).
    public enum TypeClass: Sendable {
        case number, string, object, array, bool, null
    }

    /// A `$geoWithin` shape, in degrees (`$center`: plane units).
    public enum GeoShape: Sendable {
        case box(minX: Double, maxX: Double, minY: Double, maxY: Double)
        case center(x: Double, y: Double, radius: Double)
        case centerSphere(x: Double, y: Double, radians: Double)
        /// `$polygon` (one ring) or `$geometry` (an outer ring and its holes).
        case polygon(rings: [[GeoPoint]], geometry: Bool)

        /// The operator's name for the shape, as engines declare support for it.
        public var name: String {
            switch self {
            case .box: return "$box"
            case .center: return "$center"
            case .centerSphere: return "$centerSphere"
            case .polygon(_, let geometry): return geometry ? "$geometry" : "$polygon"
            }
        }
    }

    /// `$nearSphere` (or `$near`): the centre and the distances in metres.
    public struct NearSphere: Sendable {
        public let centre: GeoPoint
        public let maxMetres: Double?
        public let minMetres: Double?
    }

    /// A longitude and latitude (or plane x and y) pair.
    public struct GeoPoint: Sendable {
        public let x: Double
        public let y: Double
    }
}

extension Filter {
    /// The first `$nearSphere` at the top of the filter or in a top-level
    /// `$and`, with its field: what orders a list nearest first.
    public var nearest: (path: FieldPath, near: NearSphere)? {
        Self.nearest(in: clauses)
    }

    private static func nearest(in clauses: [Clause]) -> (path: FieldPath, near: NearSphere)? {
        for clause in clauses {
            switch clause {
            case .group(.and, let parts):
                for part in parts { if let found = nearest(in: part) { return found } }
            case .field(let path, let ops):
                for case .nearSphere(let near) in ops { return (path, near) }
            default: continue
            }
        }
        return nil
    }
}
