import Foundation

/// Geo filters on local copies: `$geoWithin` `$box` and `$nearSphere`
/// on points stored as `[lng, lat]` or GeoJSON points, distances in metres.
enum GeoMath {
    static let earthRadius = GeoPoint.earthRadius

    static func point(_ v: JSONValue?) -> (Double, Double)? {
        switch v {
        case .array(let a)? where a.count == 2:
            guard let x = a[0].doubleValue, let y = a[1].doubleValue else { return nil }
            return (x, y)
        case .object(let o)?: return point(o["coordinates"])
        default: return nil
        }
    }

    static func within(_ shape: JSONValue, _ candidates: [JSONValue?]) throws -> Bool {
        let inside: ((Double, Double)) -> Bool
        if let box = shape["$box"]?.arrayValue, box.count == 2, let a = point(box[0]), let b = point(box[1]) {
            inside = { p in (min(a.0, b.0)...max(a.0, b.0)).contains(p.0) && (min(a.1, b.1)...max(a.1, b.1)).contains(p.1) }
        } else if let circle = shape["$centerSphere"]?.arrayValue, circle.count == 2, let c = point(circle[0]),
                  let radians = circle[1].doubleValue {
            inside = { p in distance(c, p) <= radians * earthRadius }
        } else if let ring = shape["$polygon"]?.arrayValue?.compactMap(point), ring.count >= 3 {
            inside = { p in contains(ring, p) }
        } else {
            throw RoostError.localStore("the offline store evaluates $geoWithin with $box, $centerSphere or $polygon")
        }
        return candidates.contains { c in point(c).map(inside) ?? false }
    }

    /// Whether `p` lies inside (or on the edge of) the polygon `ring` (planar, even-odd rule).
    static func contains(_ ring: [(Double, Double)], _ p: (Double, Double)) -> Bool {
        var inside = false
        var j = ring.count - 1
        for i in ring.indices {
            let (a, b) = (ring[i], ring[j])
            if (a.1 > p.1) != (b.1 > p.1), p.0 < (b.0 - a.0) * (p.1 - a.1) / (b.1 - a.1) + a.0 { inside.toggle() }
            j = i
        }
        return inside
    }

    /// The distance in metres from the operand's point when within its bounds.
    static func near(_ operand: JSONValue, _ candidates: [JSONValue?]) throws -> Double? {
        let center = point(operand["$geometry"]) ?? point(operand)
        guard let center else { throw RoostError.localStore("$nearSphere needs a point") }
        let maxDistance = operand["$maxDistance"]?.doubleValue ?? .infinity
        let minDistance = operand["$minDistance"]?.doubleValue ?? 0
        let distances = candidates.compactMap { point($0).map { distance(center, $0) } }
        guard let d = distances.min(), d <= maxDistance, d >= minDistance else { return nil }
        return d
    }

    /// Great-circle distance (haversine) between two `(lng, lat)` points.
    static func distance(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let (lat1, lat2) = (a.1 * .pi / 180, b.1 * .pi / 180)
        let dLat = lat2 - lat1, dLng = (b.0 - a.0) * .pi / 180
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }

    /// The first `$nearSphere` in a filter, as `(path, operand)`, to order results by distance.
    static func nearClause(_ filter: [String: JSONValue]) -> (String, JSONValue)? {
        for (key, value) in filter where !key.hasPrefix("$") {
            if let operand = value["$nearSphere"] ?? value["$near"] { return (key, operand) }
        }
        return nil
    }
}
