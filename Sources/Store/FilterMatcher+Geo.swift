import Foundation
import JSON

/// Geo conditions, with the arithmetic of `FilterCompiler+Geo` done in the
/// same order with the same C math functions. Where SQLite would meet a NaN
/// (and so SQL NULL), the condition does not hold, as `coalesce(…, 0)` makes it.
extension FilterMatcher {
    enum GeoTest {
        case box(minX: Double, maxX: Double, minY: Double, maxY: Double)
        case center(x: Double, y: Double, radiusSquared: Double)
        case centerSphere(x: Double, y: Double, radians: Double)
        /// An outer ring and its holes.
        case polygon([[(Double, Double)]])
        case near(x: Double, y: Double, maxMetres: Double?, minMetres: Double?)
    }

    /// The point SQL reads at a field (`FilterCompiler.overPoint`): `[x, y]`
    /// of an array, else `coordinates[0]` and `[1]`; a boolean is the
    /// integer `json_extract` makes of it.
    static func point(_ value: JSONValue?) -> (SQLNumber, SQLNumber)? {
        let pair: [JSONValue]
        if case .array(let a)? = value {
            pair = a
        } else if case .array(let c)? = key("coordinates", of: value) {
            pair = c
        } else {
            return nil
        }
        guard pair.count >= 2, let x = number(pair[0]), let y = number(pair[1]) else { return nil }
        return (x, y)
    }

    static func number(_ value: JSONValue) -> SQLNumber? {
        switch value {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .bool(let b): return .int(b ? 1 : 0)
        default: return nil
        }
    }

    static func geoWithin(_ arg: JSONValue) throws(QueryError) -> GeoTest {
        guard case .object(let shape) = arg, shape.count == 1, let (kind, spec) = shape.members.first.map({ ($0.key, $0.value) }) else {
            throw .invalid("$geoWithin needs exactly one shape.")
        }
        switch kind {
        case "$box":
            guard case .array(let corners) = spec, corners.count == 2,
                  let a = FilterCompiler.point(corners[0]), let b = FilterCompiler.point(corners[1]) else { throw .invalid("$box needs two corners.") }
            return .box(minX: min(a.0, b.0), maxX: max(a.0, b.0), minY: min(a.1, b.1), maxY: max(a.1, b.1))
        case "$center", "$centerSphere":
            guard case .array(let parts) = spec, parts.count == 2, let c = FilterCompiler.point(parts[0]),
                  let r = parts[1].doubleValue, r >= 0 else { throw .invalid("\(kind) needs [[x, y], radius].") }
            return kind == "$center" ? .center(x: c.0, y: c.1, radiusSquared: r * r) : .centerSphere(x: c.0, y: c.1, radians: r)
        case "$polygon":
            return .polygon([try FilterCompiler.ring(spec)])
        case "$geometry":
            guard case .object(let geometry) = spec, geometry["type"] == .string("Polygon"),
                  case .array(let rings) = geometry["coordinates"], !rings.isEmpty else { throw .invalid("$geometry needs a Polygon.") }
            var parsed: [[(Double, Double)]] = []
            for ring in rings { parsed.append(try FilterCompiler.ring(ring)) }
            return .polygon(parsed)
        default:
            throw .invalid("$geoWithin does not know the shape \(kind).")
        }
    }

    static func nearSphere(_ arg: JSONValue, _ ops: JSONObject) throws(QueryError) -> GeoTest {
        guard let centre = FilterCompiler.point(arg) else { throw .invalid("$nearSphere needs a point.") }
        let inner = arg.objectValue
        return .near(x: centre.0, y: centre.1,
                     maxMetres: try FilterCompiler.distance(ops["$maxDistance"] ?? inner?["$maxDistance"], name: "$maxDistance"),
                     minMetres: try FilterCompiler.distance(ops["$minDistance"] ?? inner?["$minDistance"], name: "$minDistance"))
    }

    /// `FilterCompiler.sphereDistance`: radians between the point and a centre, NaN where SQL has NULL.
    static func sphereDistance(_ x: Double, _ y: Double, _ cx: Double, _ cy: Double) -> Double {
        func radians(_ degrees: Double) -> Double { degrees * (Double.pi / 180.0) }
        let s = sqrt(pow(sin(radians(y - cy) / 2), 2) + cos(radians(cy)) * cos(radians(y)) * pow(sin(radians(x - cx) / 2), 2))
        // SQLite's min(1, s): NULL stays NULL; the first argument wins a tie.
        let capped = s.isNaN ? s : (s < 1 ? s : 1)
        return 2 * asin(capped)
    }

    /// Ray casting as `FilterCompiler.insidePolygon` sums its edge crossings; nil for SQL NULL.
    static func inside(_ x: SQLNumber, _ y: SQLNumber, _ ring: [(Double, Double)]) -> Bool? {
        var crossings = 0
        for i in ring.indices {
            let (xi, yi) = ring[i], (xj, yj) = ring[(i + 1) % ring.count]
            if yi == yj { continue }
            guard (SQLNumber.double(yi).compare(y) > 0) != (SQLNumber.double(yj).compare(y) > 0) else { continue }
            let edge = (xj - xi) * (y.double - yi) / (yj - yi) + xi
            if edge.isNaN { return nil }
            if x.compare(.double(edge)) < 0 { crossings += 1 }
        }
        return crossings % 2 == 1
    }
}

extension FilterMatcher.GeoTest {
    func holds(_ point: (SQLNumber, SQLNumber)?) -> Bool {
        guard let (x, y) = point else { return false }
        switch self {
        case .box(let minX, let maxX, let minY, let maxY):
            return x.compare(.double(minX)) >= 0 && x.compare(.double(maxX)) <= 0
                && y.compare(.double(minY)) >= 0 && y.compare(.double(maxY)) <= 0
        case .center(let cx, let cy, let radiusSquared):
            let dx = x.double - cx, dy = y.double - cy
            return dx * dx + dy * dy <= radiusSquared
        case .centerSphere(let cx, let cy, let radius):
            return FilterMatcher.sphereDistance(x.double, y.double, cx, cy) <= radius
        case .polygon(let rings):
            guard let outer = FilterMatcher.inside(x, y, rings[0]), outer else { return false }
            for hole in rings.dropFirst() where FilterMatcher.inside(x, y, hole) != false { return false }
            return true
        case .near(let cx, let cy, let maxMetres, let minMetres):
            let metres = FilterMatcher.sphereDistance(x.double, y.double, cx, cy) * FilterCompiler.earthRadiusMetres
            if metres.isNaN { return false }
            if let maxMetres, !(metres <= maxMetres) { return false }
            if let minMetres, !(metres >= minMetres) { return false }
            return true
        }
    }
}
