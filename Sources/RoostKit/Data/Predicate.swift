import Foundation

/// A field of a document, by dotted path (`"address.city"`, `"tags.0"`),
/// from which predicates are built with Swift operators.
///
/// ```swift
/// Field("age") >= 18 && Field("name").matches("^a", options: "i")
/// Field("location").within(box: GeoPoint(-123, 37), GeoPoint(-122, 38))
/// ```
public struct Field: Sendable, Hashable {
    /// The dotted path.
    public let path: String
    public init(_ path: String) { self.path = path }

    func op(_ name: String, _ operand: JSONValue) -> Predicate { Predicate([path: [name: operand]]) }

    /// Matches when the value (or, for arrays, any element) is one of `values`.
    public func isIn<T: JSONValueConvertible>(_ values: [T]) -> Predicate { op("$in", .array(values.map(\.jsonValue))) }
    /// Matches when the value is none of `values`.
    public func notIn<T: JSONValueConvertible>(_ values: [T]) -> Predicate { op("$nin", .array(values.map(\.jsonValue))) }
    /// Matches when the field is present (or absent, with `false`).
    public func exists(_ present: Bool = true) -> Predicate { op("$exists", .bool(present)) }
    /// Matches strings against a regular expression (PCRE); `options` from `i`, `m`, `s`, `x`.
    public func matches(_ pattern: String, options: String = "") -> Predicate {
        var o: [String: JSONValue] = ["$regex": .string(pattern)]
        if !options.isEmpty { o["$options"] = .string(options) }
        return Predicate([path: .object(o)])
    }
    /// Matches arrays holding every one of `values`.
    public func containsAll<T: JSONValueConvertible>(_ values: [T]) -> Predicate { op("$all", .array(values.map(\.jsonValue))) }
    /// Matches points (`[lng, lat]` or GeoJSON) inside the box from `lowerLeft` to `upperRight`.
    public func within(box lowerLeft: GeoPoint, _ upperRight: GeoPoint) -> Predicate {
        op("$geoWithin", ["$box": [lowerLeft.pair, upperRight.pair]])
    }
    /// Matches points by distance from `point`, nearest first; distances in metres.
    public func near(_ point: GeoPoint, maxDistance: Double? = nil, minDistance: Double? = nil) -> Predicate {
        var o: [String: JSONValue] = ["$geometry": ["type": "Point", "coordinates": point.pair]]
        if let maxDistance { o["$maxDistance"] = .number(maxDistance) }
        if let minDistance { o["$minDistance"] = .number(minDistance) }
        return op("$nearSphere", .object(o))
    }

    public static func == <T: JSONValueConvertible>(f: Field, v: T) -> Predicate { Predicate([f.path: ["$eq": v.jsonValue]]) }
    public static func != <T: JSONValueConvertible>(f: Field, v: T) -> Predicate { f.op("$ne", v.jsonValue) }
    public static func < <T: JSONValueConvertible>(f: Field, v: T) -> Predicate { f.op("$lt", v.jsonValue) }
    public static func <= <T: JSONValueConvertible>(f: Field, v: T) -> Predicate { f.op("$lte", v.jsonValue) }
    public static func > <T: JSONValueConvertible>(f: Field, v: T) -> Predicate { f.op("$gt", v.jsonValue) }
    public static func >= <T: JSONValueConvertible>(f: Field, v: T) -> Predicate { f.op("$gte", v.jsonValue) }
}

/// A point as Roost stores it: longitude, then latitude, in degrees.
public struct GeoPoint: Sendable, Hashable, Codable {
    public var longitude: Double
    public var latitude: Double
    public init(_ longitude: Double, _ latitude: Double) { self.longitude = longitude; self.latitude = latitude }
    var pair: JSONValue { [.number(longitude), .number(latitude)] }
}

/// A MongoDB filter document, as Roost's `query` parameter takes it.
///
/// Build one from ``Field`` operators and combine with `&&`, `||`, or give
/// the document directly: `Predicate(["categories": ["$in": ["Park"]]])`.
public struct Predicate: Sendable, Hashable {
    /// The filter document.
    public let document: [String: JSONValue]

    public init(_ document: [String: JSONValue]) { self.document = document }

    /// The filter's JSON text.
    public var json: String { JSONValue.object(document).jsonText }

    public static func && (a: Predicate, b: Predicate) -> Predicate {
        if Set(a.document.keys).isDisjoint(with: b.document.keys), !a.document.keys.contains(where: { $0.hasPrefix("$") }),
           !b.document.keys.contains(where: { $0.hasPrefix("$") }) {
            return Predicate(a.document.merging(b.document) { x, _ in x })
        }
        return Predicate(["$and": [.object(a.document), .object(b.document)]])
    }

    public static func || (a: Predicate, b: Predicate) -> Predicate {
        Predicate(["$or": [.object(a.document), .object(b.document)]])
    }

    /// Matches documents that match none of `predicates`.
    public static func none(of predicates: [Predicate]) -> Predicate {
        Predicate(["$nor": .array(predicates.map { .object($0.document) })])
    }
}
