import Foundation
import JSON

/// Geo conditions, with the arithmetic of `FilterCompiler+Geo` done in the
/// same order with the same C math functions. Where SQLite would meet a NaN
/// (and so SQL NULL), the condition does not hold, as `coalesce(…, 0)` makes it.
extension FilterMatcher {
    /// A geo condition: the point at the field lies in the shape, or within the distances of the centre.
    enum GeoTest {
        case within(Filter.GeoShape)
        case near(Filter.NearSphere)
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

    /// `FilterCompiler.sphereDistance`: radians between the point and a centre, NaN where SQL has NULL.
    static func sphereDistance(_ x: Double, _ y: Double, _ cx: Double, _ cy: Double) -> Double {
        func radians(_ degrees: Double) -> Double { degrees * (Double.pi / 180.0) }
        let s = sqrt(pow(sin(radians(y - cy) / 2), 2) + cos(radians(cy)) * cos(radians(y)) * pow(sin(radians(x - cx) / 2), 2))
        // SQLite's min(1, s): NULL stays NULL; the first argument wins a tie.
        let capped = s.isNaN ? s : (s < 1 ? s : 1)
        return 2 * asin(capped)
    }

    /// Ray casting as `FilterCompiler.insidePolygon` sums its edge crossings; nil for SQL NULL.
    static func inside(_ x: SQLNumber, _ y: SQLNumber, _ ring: [Filter.GeoPoint]) -> Bool? {
        var crossings = 0
        for i in ring.indices {
            let a = ring[i], b = ring[(i + 1) % ring.count]
            let (xi, yi, xj, yj) = (a.x, a.y, b.x, b.y)
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
        case .within(.box(let minX, let maxX, let minY, let maxY)):
            return x.compare(.double(minX)) >= 0 && x.compare(.double(maxX)) <= 0
                && y.compare(.double(minY)) >= 0 && y.compare(.double(maxY)) <= 0
        case .within(.center(let cx, let cy, let radius)):
            let dx = x.double - cx, dy = y.double - cy
            return dx * dx + dy * dy <= radius * radius
        case .within(.centerSphere(let cx, let cy, let radians)):
            return FilterMatcher.sphereDistance(x.double, y.double, cx, cy) <= radians
        case .within(.polygon(let rings, _)):
            guard let outer = FilterMatcher.inside(x, y, rings[0]), outer else { return false }
            for hole in rings.dropFirst() where FilterMatcher.inside(x, y, hole) != false { return false }
            return true
        case .near(let near):
            let metres = FilterMatcher.sphereDistance(x.double, y.double, near.centre.x, near.centre.y) * FilterCompiler.earthRadiusMetres
            if metres.isNaN { return false }
            if let maxMetres = near.maxMetres, !(metres <= maxMetres) { return false }
            if let minMetres = near.minMetres, !(metres >= minMetres) { return false }
            return true
        }
    }
}
