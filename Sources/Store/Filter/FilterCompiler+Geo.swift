import Foundation
import JSON

/// Geo operators over points stored as legacy `[lng, lat]` pairs or GeoJSON
/// `Point`s. Distances on the sphere use MongoDB's earth radius.
extension FilterCompiler {
    public static let earthRadiusMetres = 6_378_100.0

    /// A scalar subquery yielding `expr` over the point at `path` as `p.x, p.y`,
    /// or NULL when the field holds no point.
    func overPoint(_ path: FieldPath, root: ValueRef, _ expr: (String, String) -> String) -> String {
        // The same numbers from the engine's points table (no row there: no point), not parsed again.
        if case .path(let base, let steps) = root, base == Self.documentColumn, steps.isEmpty, let table = pointTable?(path) {
            return "(SELECT \(expr("s.x", "s.y")) FROM \(table) AS s WHERE s.rid = \(Self.rowIDColumn))"
        }
        var ref = root
        for c in path.components { ref = ref.child(.key(c), dialect) }
        let t = typeOf(ref)
        let lng = "CASE WHEN \(dialect.isArray(t)) THEN \(valueOf(ref.child(.index(0), dialect))) ELSE \(valueOf(ref.child(.key("coordinates"), dialect).child(.index(0), dialect))) END"
        let lat = "CASE WHEN \(dialect.isArray(typeOf(ref))) THEN \(valueOf(ref.child(.index(1), dialect))) ELSE \(valueOf(ref.child(.key("coordinates"), dialect).child(.index(1), dialect))) END"
        return dialect.overPoint(lng: lng, lat: lat, expr)
    }

    /// Great-circle distance in radians between `(x, y)` and a bound centre, all in degrees.
    func sphereDistance(_ x: String, _ y: String, centre: (Double, Double)) -> String {
        let cx = bind(.double(centre.0)), cy = bind(.double(centre.1))
        return dialect.greatCircle(x, y, cx: cx, cy: cy)
    }

    /// A prefilter for a bounding box, when the field has a geo index: the
    /// R*Tree's matches, or (`geoPerRow`) the row's entry in the points table.
    /// `driver` receives the box, for a plan that walks it. Another engine's
    /// index (`geoCandidates`) is asked for the cap, when the shape is one, else the box.
    func geoPrefilter(_ path: FieldPath, minX: Double, maxX: Double, minY: Double, maxY: Double,
                      cap: ((Double, Double), Double)? = nil, driver: ((GeoDriver) -> Void)? = nil) -> String? {
        guard useIndexes, !rowProbes, let table = layout?.geoTables[path.description] else {
            guard useIndexes, !rowProbes, let geoCandidates else { return nil }
            let region = cap.map { GeoRegion.cap(centre: $0.0, radians: $0.1) } ?? .box(minX: minX, maxX: maxX, minY: minY, maxY: maxY)
            return geoCandidates(path, region, bind)
        }
        // The R*Tree stores 32-bit floats rounded outwards, so a point's entry is a tiny box
        // around it: test overlap, not containment, or points on the edge would be lost.
        // The points table stores doubles, which may differ from SQLite's reading of the
        // JSON in the last bit and meet a shape's edge arithmetic: its box is widened a
        // little (1e-9 of the value, far less than the R*Tree's rounding).
        func out(_ v: Double, _ direction: Double) -> String { bind(.double(v + direction * max(abs(v) * 1e-9, 1e-12))) }
        let box = GeoDriver(rtree: table, points: CollectionLayout.pointTable(table),
                            minX: bind(.double(minX)), maxX: bind(.double(maxX)), minY: bind(.double(minY)), maxY: bind(.double(maxY)),
                            wideMinX: out(minX, -1), wideMaxX: out(maxX, 1), wideMinY: out(minY, -1), wideMaxY: out(maxY, 1))
        geoBoxes.append(box.gather)
        driver?(box)
        if geoPerRow { return "EXISTS (SELECT 1 FROM \(box.points) AS q WHERE q.rid = \(Self.rowIDColumn) AND \(box.holds("q")))" }
        return "\(Self.rowIDColumn) IN (\(box.gather))"
    }

    /// The bounding box, in degrees, of a spherical cap of `radius` radians.
    package static func capBox(centre: (Double, Double), radius: Double) -> (Double, Double, Double, Double) {
        let dLat = radius * 180 / .pi
        let minY = max(-90, centre.1 - dLat), maxY = min(90, centre.1 + dLat)
        let cosLat = min(abs(cos(minY * .pi / 180)), abs(cos(maxY * .pi / 180)))
        if cosLat < 1e-6 || dLat >= 90 { return (-180, 180, minY, maxY) }
        let dLng = min(180, dLat / cosLat)
        if centre.0 - dLng < -180 || centre.0 + dLng > 180 { return (-180, 180, minY, maxY) }
        return (centre.0 - dLng, centre.0 + dLng, minY, maxY)
    }

    /// Point-in-polygon by ray casting, compiled to a sum of edge crossings.
    func insidePolygon(_ x: String, _ y: String, _ ring: [Filter.GeoPoint]) -> String {
        var terms: [String] = []
        for i in ring.indices {
            let a = ring[i], b = ring[(i + 1) % ring.count]
            let (xi, yi, xj, yj) = (a.x, a.y, b.x, b.y)
            if yi == yj { continue }
            let pxi = bind(.double(xi)), pyi = bind(.double(yi)), pxj = bind(.double(xj)), pyj = bind(.double(yj))
            terms.append("((\(pyi) > \(y)) <> (\(pyj) > \(y)) AND \(x) < (\(pxj) - \(pxi)) * (\(y) - \(pyi)) / (\(pyj) - \(pyi)) + \(pxi))")
        }
        return terms.isEmpty ? "0" : "((" + terms.joined(separator: " + ") + ") % 2 = 1)"
    }

    func geoWithin(_ path: FieldPath, _ shape: Filter.GeoShape, root: ValueRef) throws(QueryError) -> String {
        guard dialect.supportsGeoShape(shape.name) else {
            throw .invalid("$geoWithin \(shape.name) is not available on this storage engine yet (PostgreSQL: $box and $centerSphere; see docs/ENGINES.md).")
        }
        var prefilter: String?
        var driver: GeoDriver?
        let exact: String
        switch shape {
        case .box(let minX, let maxX, let minY, let maxY):
            prefilter = geoPrefilter(path, minX: minX, maxX: maxX, minY: minY, maxY: maxY) { driver = $0 }
            let bx0 = bind(.double(minX)), bx1 = bind(.double(maxX)), by0 = bind(.double(minY)), by1 = bind(.double(maxY))
            exact = overPoint(path, root: root) { x, y in "\(x) BETWEEN \(bx0) AND \(bx1) AND \(y) BETWEEN \(by0) AND \(by1)" }
        case .center(let x0, let y0, let r):
            prefilter = geoPrefilter(path, minX: x0 - r, maxX: x0 + r, minY: y0 - r, maxY: y0 + r) { driver = $0 }
            let cx = bind(.double(x0)), cy = bind(.double(y0)), rr = bind(.double(r * r))
            exact = overPoint(path, root: root) { x, y in "(\(x) - \(cx)) * (\(x) - \(cx)) + (\(y) - \(cy)) * (\(y) - \(cy)) <= \(rr)" }
        case .centerSphere(let x0, let y0, let r):
            let box = Self.capBox(centre: (x0, y0), radius: r)
            prefilter = geoPrefilter(path, minX: box.0, maxX: box.1, minY: box.2, maxY: box.3, cap: ((x0, y0), r)) { driver = $0 }
            let radius = bind(.double(r))
            exact = overPoint(path, root: root) { x, y in "\(self.sphereDistance(x, y, centre: (x0, y0))) <= \(radius)" }
        case .polygon(let rings, _):
            let outer = rings[0]
            prefilter = geoPrefilter(path, minX: outer.map(\.x).min()!, maxX: outer.map(\.x).max()!,
                                     minY: outer.map(\.y).min()!, maxY: outer.map(\.y).max()!) { driver = $0 }
            exact = overPoint(path, root: root) { x, y in
                ([self.insidePolygon(x, y, outer)] + rings.dropFirst().map { "NOT " + self.insidePolygon(x, y, $0) }).joined(separator: " AND ")
            }
        }
        let exactMatch = "coalesce(\(exact), \(dialect.falseSQL))"
        guard let prefilter else { return exactMatch }
        let sql = "(\(prefilter) AND \(exactMatch))"
        geoDrivers[sql] = driver
        return sql
    }

    /// `$nearSphere`: filters by distance in metres and orders nearest first.
    func nearSphere(_ path: FieldPath, _ near: Filter.NearSphere, root: ValueRef) -> String {
        let centre = (near.centre.x, near.centre.y)
        let distance = overPoint(path, root: root) { x, y in
            "\(self.sphereDistance(x, y, centre: centre)) * \(Self.earthRadiusMetres)"
        }
        nearestFirst = distance
        nearPoint = NearPoint(path: path.description, lng: centre.0, lat: centre.1)
        if useIndexes, !rowProbes, let table = layout?.geoTables[path.description] {
            nearest = NearestSearch(table: table, centre: centre, maxMetres: near.maxMetres)
        }
        var clauses = ["\(distance) IS NOT NULL"]
        if let maxMetres = near.maxMetres {
            clauses.append("\(distance) <= \(bind(.double(maxMetres)))")
            let box = Self.capBox(centre: centre, radius: maxMetres / Self.earthRadiusMetres)
            if let pre = geoPrefilter(path, minX: box.0, maxX: box.1, minY: box.2, maxY: box.3,
                                      cap: (centre, maxMetres / Self.earthRadiusMetres)) { clauses.insert(pre, at: 0) }
        }
        if let minMetres = near.minMetres { clauses.append("\(distance) >= \(bind(.double(minMetres)))") }
        return "(" + clauses.joined(separator: " AND ") + ")"
    }
}
