import Foundation

/// A field of a document, by dotted path (`"address.city"`, `"tags.0"`),
/// from which filters are built with Swift operators.
///
/// ```swift
/// Field("age") >= 18 && Field("name").matches("^a", options: "i")
/// Field("location").within(box: GeoPoint(-123, 37), GeoPoint(-122, 38))
/// ```
public struct Field: Sendable, Hashable {
    /// The dotted path.
    public let path: String
    public init(_ path: String) { self.path = path }

    func op(_ name: String, _ operand: JSONValue) -> Filter { Filter([path: [name: operand]]) }

    /// Matches when the value (or, for arrays, any element) is one of `values`.
    public func isIn<T: JSONValueConvertible>(_ values: [T]) -> Filter { op("$in", .array(values.map(\.jsonValue))) }
    /// Matches when the value is none of `values`.
    public func notIn<T: JSONValueConvertible>(_ values: [T]) -> Filter { op("$nin", .array(values.map(\.jsonValue))) }
    /// Matches when the field is present (or absent, with `false`).
    public func exists(_ present: Bool = true) -> Filter { op("$exists", .bool(present)) }
    /// Matches strings against a regular expression (PCRE); `options` from `i`, `m`, `s`, `x`.
    public func matches(_ pattern: String, options: String = "") -> Filter {
        var o: [String: JSONValue] = ["$regex": .string(pattern)]
        if !options.isEmpty { o["$options"] = .string(options) }
        return Filter([path: .object(o)])
    }
    /// Matches arrays holding every one of `values`.
    public func containsAll<T: JSONValueConvertible>(_ values: [T]) -> Filter { op("$all", .array(values.map(\.jsonValue))) }
    /// Matches points (`[lng, lat]` or GeoJSON) inside the box from `lowerLeft` to `upperRight`.
    public func within(box lowerLeft: GeoPoint, _ upperRight: GeoPoint) -> Filter {
        op("$geoWithin", ["$box": [lowerLeft.pair, upperRight.pair]])
    }
    /// Matches points within `radius` metres of `center` on the sphere (`$geoWithin` `$centerSphere`, in radians on the wire).
    public func within(radius: Double, of center: GeoPoint) -> Filter {
        op("$geoWithin", ["$centerSphere": [center.pair, .number(radius / GeoPoint.earthRadius)]])
    }
    /// Matches points inside the polygon through `vertices` (`$geoWithin` `$polygon`, closed automatically; SQLite engine).
    public func within(polygon vertices: [GeoPoint]) -> Filter {
        op("$geoWithin", ["$polygon": .array(vertices.map(\.pair))])
    }
    /// Matches points by distance from `point`, nearest first; distances in metres.
    public func near(_ point: GeoPoint, maxDistance: Double? = nil, minDistance: Double? = nil) -> Filter {
        var o: [String: JSONValue] = ["$geometry": ["type": "Point", "coordinates": point.pair]]
        if let maxDistance { o["$maxDistance"] = .number(maxDistance) }
        if let minDistance { o["$minDistance"] = .number(minDistance) }
        return op("$nearSphere", .object(o))
    }

    public static func == <T: JSONValueConvertible>(f: Field, v: T) -> Filter { Filter([f.path: ["$eq": v.jsonValue]]) }
    public static func != <T: JSONValueConvertible>(f: Field, v: T) -> Filter { f.op("$ne", v.jsonValue) }
    public static func < <T: JSONValueConvertible>(f: Field, v: T) -> Filter { f.op("$lt", v.jsonValue) }
    public static func <= <T: JSONValueConvertible>(f: Field, v: T) -> Filter { f.op("$lte", v.jsonValue) }
    public static func > <T: JSONValueConvertible>(f: Field, v: T) -> Filter { f.op("$gt", v.jsonValue) }
    public static func >= <T: JSONValueConvertible>(f: Field, v: T) -> Filter { f.op("$gte", v.jsonValue) }
}

/// A MongoDB filter document, as Roost's `query` parameter takes it.
///
/// Build one from ``Field`` operators and combine with `&&`, `||`, or give
/// the document directly: `Filter(["categories": ["$in": ["Park"]]])`.
public struct Filter: Sendable, Hashable {
    /// The filter document.
    public let document: [String: JSONValue]

    public init(_ document: [String: JSONValue]) { self.document = document }

    /// The filter's JSON text.
    public var json: String { JSONValue.object(document).jsonText }

    public static func && (a: Filter, b: Filter) -> Filter {
        if Set(a.document.keys).isDisjoint(with: b.document.keys), !a.document.keys.contains(where: { $0.hasPrefix("$") }),
           !b.document.keys.contains(where: { $0.hasPrefix("$") }) {
            return Filter(a.document.merging(b.document) { x, _ in x })
        }
        return Filter(["$and": [.object(a.document), .object(b.document)]])
    }

    public static func || (a: Filter, b: Filter) -> Filter {
        Filter(["$or": [.object(a.document), .object(b.document)]])
    }

    /// Matches documents that match none of `filters`.
    public static func none(of filters: [Filter]) -> Filter {
        Filter(["$nor": .array(filters.map { .object($0.document) })])
    }
}
