import JSON

/// Reads the geo arguments of a filter: points as legacy `[lng, lat]`
/// pairs or GeoJSON `Point`s, `$geoWithin` shapes and `$nearSphere`.
enum GeoShapeParser {
    static let maxPolygonVertices = 1000

    /// `[x, y]`, `{"type": "Point", "coordinates": [x, y]}` or `{"$geometry": …}`.
    static func point(_ value: JSONValue?) -> Filter.GeoPoint? {
        switch value {
        case .array(let a) where a.count == 2:
            guard let x = a[0].doubleValue, let y = a[1].doubleValue else { return nil }
            return Filter.GeoPoint(x: x, y: y)
        case .object(let o):
            if let g = o["$geometry"] { return point(g) }
            if o["type"] == .string("Point") { return point(o["coordinates"]) }
            return nil
        default: return nil
        }
    }

    static func ring(_ value: JSONValue?) throws(QueryError) -> [Filter.GeoPoint] {
        guard case .array(let items) = value, items.count >= 3, items.count <= maxPolygonVertices else {
            throw .invalid("A polygon needs between 3 and \(maxPolygonVertices) points.")
        }
        var points: [Filter.GeoPoint] = []
        for item in items {
            guard let p = point(item) else { throw .invalid("Polygon points must be [lng, lat] pairs of numbers.") }
            points.append(p)
        }
        return points
    }

    static func shape(_ arg: JSONValue) throws(QueryError) -> Filter.GeoShape {
        guard case .object(let shape) = arg, shape.count == 1, let (kind, spec) = shape.members.first.map({ ($0.key, $0.value) }) else {
            throw .invalid("$geoWithin needs exactly one shape: $box, $center, $centerSphere, $polygon or $geometry.")
        }
        switch kind {
        case "$box":
            guard case .array(let corners) = spec, corners.count == 2, let a = point(corners[0]), let b = point(corners[1]) else {
                throw .invalid("$box needs [[lng, lat], [lng, lat]].")
            }
            return .box(minX: min(a.x, b.x), maxX: max(a.x, b.x), minY: min(a.y, b.y), maxY: max(a.y, b.y))
        case "$center":
            guard case .array(let parts) = spec, parts.count == 2, let c = point(parts[0]),
                  let r = parts[1].doubleValue, r >= 0 else { throw .invalid("$center needs [[x, y], radius].") }
            return .center(x: c.x, y: c.y, radius: r)
        case "$centerSphere":
            guard case .array(let parts) = spec, parts.count == 2, let c = point(parts[0]),
                  let r = parts[1].doubleValue, r >= 0 else { throw .invalid("$centerSphere needs [[lng, lat], radians].") }
            return .centerSphere(x: c.x, y: c.y, radians: r)
        case "$polygon":
            return .polygon(rings: [try ring(spec)], geometry: false)
        case "$geometry":
            guard case .object(let geometry) = spec, geometry["type"] == .string("Polygon"),
                  case .array(let rings) = geometry["coordinates"], !rings.isEmpty else {
                throw .invalid("$geoWithin $geometry supports a GeoJSON Polygon.")
            }
            var parsed: [[Filter.GeoPoint]] = []
            for r in rings { parsed.append(try ring(r)) }
            return .polygon(rings: parsed, geometry: true)
        default:
            throw .invalid("$geoWithin does not know the shape \(kind).")
        }
    }

    /// `$nearSphere`'s centre, with `$maxDistance`/`$minDistance` beside it or inside its `$geometry` object.
    static func near(_ arg: JSONValue, maxDistance: JSONValue?, minDistance: JSONValue?) throws(QueryError) -> Filter.NearSphere {
        guard let centre = point(arg) else {
            throw .invalid("$nearSphere needs [lng, lat] or {\"$geometry\": {\"type\": \"Point\", \"coordinates\": [lng, lat]}}.")
        }
        let inner = arg.objectValue
        return Filter.NearSphere(centre: centre,
                                 maxMetres: try distance(maxDistance ?? inner?["$maxDistance"], name: "$maxDistance"),
                                 minMetres: try distance(minDistance ?? inner?["$minDistance"], name: "$minDistance"))
    }

    static func distance(_ value: JSONValue?, name: String) throws(QueryError) -> Double? {
        guard let value else { return nil }
        guard let d = value.doubleValue, d >= 0 else { throw .invalid("\(name) needs a non-negative number of metres.") }
        return d
    }
}
