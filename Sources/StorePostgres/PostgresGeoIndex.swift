import Foundation
import Store

/// Geo indexes on PostgreSQL: a GiST index on the point's `ll_to_earth`
/// (contrib `cube` + `earthdistance`), and the conditions that let a query
/// use it. Each condition keeps every point of its region (and a few
/// more): the exact test SQLite uses still decides each row.
enum PostgresGeoIndex {
    /// How much wider than the region a condition is, relative (and in
    /// radians or unit-sphere lengths): far above the rounding of
    /// `ll_to_earth` and the haversine, far below a metre.
    static let relativeMargin = 1e-7
    static let absoluteMargin = 1e-9

    /// A condition true for every row whose point lies in `region`, or nil
    /// when the region is too large (or its latitudes too odd) to narrow anything.
    static func candidates(path: [String], region: GeoRegion, bind: (SQLValue) -> String) -> String? {
        let dialect = PostgresDialect()
        switch region {
        case .cap(let centre, let radians):
            let wide = radians * (1 + relativeMargin) + absoluteMargin
            guard wide < .pi, isNear(centre.0), isNear(centre.1) else { return nil }
            let centreSQL = "ll_to_earth(\(bind(.double(centre.1))), \(bind(.double(centre.0))))"
            let inCap = "earth_box(\(centreSQL), earth() * \(bind(.double(wide)))) @> \(dialect.earthPoint(document: FilterCompiler.documentColumn, path: path, bind: bind))"
            // A far point's exact distance is anything: it stays a candidate of every cap.
            return "(\(inCap) OR \(dialect.farPoint(document: FilterCompiler.documentColumn, path: path, bind: bind)))"
        case .box(let minX, let maxX, let minY, let maxY):
            // A box of near coordinates holds no far point.
            guard [minX, maxX, minY, maxY].allSatisfy(isNear), let (low, high) = unitBox(minX: minX, maxX: maxX, minY: minY, maxY: maxY) else { return nil }
            func corner(_ v: [Double]) -> String { "ARRAY[" + v.map { "earth() * \(bind(.double($0)))" }.joined(separator: ", ") + "]" }
            return "cube(\(corner(low)), \(corner(high))) @> \(dialect.earthPoint(document: FilterCompiler.documentColumn, path: path, bind: bind))"
        }
    }

    /// Whether a coordinate is within `PostgresDialect.farCoordinate` degrees.
    static func isNear(_ degrees: Double) -> Bool { abs(degrees) <= 1e6 }

    /// The box, on the unit sphere (x toward lng 0, z toward the north pole,
    /// as `ll_to_earth`), that holds every point whose longitude is in
    /// [minX, maxX] and latitude in [minY, maxY], widened by the margins;
    /// nil when a latitude lies outside [-90, 90].
    static func unitBox(minX: Double, maxX: Double, minY: Double, maxY: Double) -> (low: [Double], high: [Double])? {
        guard minY >= -90, maxY <= 90, minY <= maxY, minX <= maxX, minX.isFinite, maxX.isFinite else { return nil }
        func rad(_ d: Double) -> Double { d * (Double.pi / 180.0) }
        // cos(lat) ≥ 0 over the range: its least and greatest values.
        let cosLow = min(cos(rad(minY)), cos(rad(maxY)))
        let cosHigh = minY <= 0 && maxY >= 0 ? 1 : max(cos(rad(minY)), cos(rad(maxY)))
        /// Whether some angle `t + 360k` lies in [minX, maxX].
        func reaches(_ t: Double) -> Bool { maxX - minX >= 360 || ((minX - t) / 360).rounded(.up) * 360 + t <= maxX }
        let cosLng = (min(cos(rad(minX)), cos(rad(maxX)), reaches(180) ? -1 : 1), max(cos(rad(minX)), cos(rad(maxX)), reaches(0) ? 1 : -1))
        let sinLng = (min(sin(rad(minX)), sin(rad(maxX)), reaches(-90) ? -1 : 1), max(sin(rad(minX)), sin(rad(maxX)), reaches(90) ? 1 : -1))
        // x = cos(lat)·cos(lng), y = cos(lat)·sin(lng): bilinear, so the extremes are at the corners.
        func span(_ a: (Double, Double)) -> (Double, Double) {
            let corners = [cosLow * a.0, cosLow * a.1, cosHigh * a.0, cosHigh * a.1]
            return (corners.min()!, corners.max()!)
        }
        let x = span(cosLng), y = span(sinLng), z = (sin(rad(minY)), sin(rad(maxY)))
        let margin = { (v: Double) in abs(v) * relativeMargin + absoluteMargin }
        let low = [x.0, y.0, z.0].map { $0 - margin($0) }, high = [x.1, y.1, z.1].map { $0 + margin($0) }
        return (low, high)
    }

    /// The GiST index on the point at `path` of table `table`, and an index
    /// on how far out the point is (`PostgresDialect.farness`): it finds
    /// the far rows, and its statistics tell the planner they are few.
    static func createSQL(names: [String], table: String, path: [String], literal: (SQLValue) -> String) -> [String] {
        let dialect = PostgresDialect()
        let point = dialect.earthPoint(document: "doc", path: path, bind: literal)
        return ["CREATE INDEX IF NOT EXISTS \(names[0]) ON \(table) USING gist ((\(point)))",
                "CREATE INDEX IF NOT EXISTS \(names[1]) ON \(table) ((\(dialect.farness(document: "doc", path: path, bind: literal))))"]
    }
}
