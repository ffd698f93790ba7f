import JSON

/// The distance in metres from a `$nearSphere` (or `$near`) centre to each
/// listed document's point, added to the document as `_distance` (as
/// MongoDB's `$geoNear` adds a distance field). The same arithmetic as the
/// filter's (`FilterMatcher.sphereDistance`, `FilterCompiler.earthRadiusMetres`),
/// on the point the filter reads at the field (`[longitude, latitude]`, or a
/// GeoJSON point's coordinates).
///
/// Only a `$nearSphere` at the filter's top level (or in a top-level `$and`)
/// orders a list, so only that one is measured.
public struct NearDistance: Sendable {
    /// The member documents carry the distance in.
    public static let field = "_distance"
    static let quotedField = "\"\(field)\""

    let path: [String]
    package let centre: (Double, Double)

    /// The `$nearSphere` of `filter`, or nil when it has none (or does not
    /// parse). Most lists have none: they are told apart by a look at the
    /// members that can hold one, without parsing the filter again.
    public init?(_ filter: JSONValue) {
        guard Self.mayOrderByDistance(filter), let parsed = try? Filter(filter) else { return nil }
        self.init(parsed)
    }

    /// Whether a top-level member (or one in a top-level `$and`) has a `$nearSphere` or `$near`.
    static func mayOrderByDistance(_ filter: JSONValue) -> Bool {
        guard case .object(let object) = filter else { return false }
        for (key, value) in object {
            if key == "$and", case .array(let parts) = value, parts.contains(where: mayOrderByDistance) { return true }
            if case .object(let ops) = value, ops["$nearSphere"] != nil || ops["$near"] != nil { return true }
        }
        return false
    }

    /// The `$nearSphere` that orders `filter`'s list, or nil when it has none.
    public init?(_ filter: Filter) {
        guard let (path, near) = filter.nearest else { return nil }
        self.path = path.components
        centre = (near.centre.x, near.centre.y)
    }

    /// `document` (a stored document's JSON text, an object) with `_distance` set to
    /// `metres`, the distance the engine measured while ordering the page, added
    /// as `annotate` adds it (the last member) without parsing the document.
    public static func appended(_ metres: Double, to document: String) -> String {
        var text = document
        guard text.utf8.last == UInt8(ascii: "}"), UTF8Search.firstOffset(of: Self.quotedField, in: text) == nil else {
            return NearDistance.reparsed(document, metres)
        }
        text.removeLast()
        let member = "\"\(field)\":" + JSONValue.double(metres).jsonText + "}"
        return text.utf8.last == UInt8(ascii: "{") ? text + member : text + "," + member
    }

    /// `document` parsed, with `_distance` set, and written again (what `appended` falls back to).
    static func reparsed(_ document: String, _ metres: Double) -> String {
        guard case .object(var object)? = try? JSONParser.parse(document) else { return document }
        object[field] = .double(metres)
        return JSONValue.object(object).jsonText
    }

    /// `document` (a stored document's JSON text) with `_distance`, in metres;
    /// unchanged when it cannot be read or holds no point at the field.
    public func annotate(_ document: String) -> String {
        guard case .object(var object)? = try? JSONParser.parse(document) else { return document }
        var value: JSONValue? = .object(object)
        for key in path { value = FilterMatcher.key(key, of: value) }
        guard let (x, y) = FilterMatcher.point(value) else { return document }
        let metres = FilterMatcher.sphereDistance(x.double, y.double, centre.0, centre.1) * FilterCompiler.earthRadiusMetres
        guard metres.isFinite else { return document }
        object[Self.field] = .double(metres)
        return JSONValue.object(object).jsonText
    }
}
