import Store

/// Geo on PostgreSQL, with SQLite's arithmetic: coordinates as `float8`
/// (a JSON boolean as 1 or 0, as SQLite's `json_extract` reads it), the
/// same haversine with the same C math functions, and NULL wherever SQLite
/// meets NULL or NaN. PostgreSQL raises errors where SQLite gives NULL or
/// infinity (a square root of a negative number, an overflowing
/// subtraction), so those cases are tested first and answer NULL.
///
/// `$box` and `$centerSphere` compile (and `$nearSphere`); `$center`,
/// `$polygon` and `$geometry` are refused with a 400 for now.
extension PostgresDialect {
    public func supportsGeoShape(_ shape: String) -> Bool { shape == "$box" || shape == "$centerSphere" }

    /// Each step is its own subquery behind `OFFSET 0`, which the planner
    /// does not flatten: the coordinates are read from the document once
    /// per row, not once per use.
    public func overPoint(lng: String, lat: String, _ expr: (String, String) -> String) -> String {
        "(SELECT \(expr("p.x", "p.y")) FROM (SELECT \(Self.geoNumber("c.lng")) AS x, \(Self.geoNumber("c.lat")) AS y"
            + " FROM (SELECT \(lng) AS lng, \(lat) AS lat OFFSET 0) AS c OFFSET 0) AS p WHERE p.x IS NOT NULL AND p.y IS NOT NULL)"
    }

    /// Half of the largest double: `a / 2 - b / 2` beyond it means `a - b` overflows.
    static let halfMaxDouble = "8.98846567431158e307"

    public func greatCircle(_ x: String, _ y: String, cx: String, cy: String) -> String {
        let cx = Self.asFloat8(cx), cy = Self.asFloat8(cy)
        let a = "(pow(sin(radians(\(y) - \(cy)) / 2), 2) + cos(radians(\(cy))) * cos(radians(\(y))) * pow(sin(radians(\(x) - \(cx)) / 2), 2))"
        return "(CASE WHEN abs(\(x) / 2 - \(cx) / 2) <= \(Self.halfMaxDouble) AND abs(\(y) / 2 - \(cy) / 2) <= \(Self.halfMaxDouble)"
            + " AND \(a) >= 0 THEN 2 * asin(least(1, sqrt(\(a)))) END)"
    }

    /// A bound double (`$n::numeric`, `placeholder`) read as `float8` instead:
    /// its text is a double's shortest form, which `float8` reads as the same
    /// double the `numeric` would become, but a generic plan converts a
    /// `numeric` parameter again on every row (text and back, about 1 µs, ten
    /// times a distance). Any other expression is returned unchanged.
    static func asFloat8(_ bound: String) -> String {
        guard bound.hasPrefix("$"), bound.hasSuffix("::numeric"), bound.dropFirst().dropLast(9).allSatisfy(\.isNumber) else { return bound }
        return bound.dropLast(9) + "::float8"
    }

    /// A `jsonb` value as the number SQLite's geo SQL reads: a number as
    /// `float8`, a boolean as 1 or 0, anything else NULL.
    static func geoNumber(_ json: String) -> String {
        "(CASE jsonb_typeof(\(json)) WHEN 'number' THEN roost_float8(\(json) #>> '{}')"
            + " WHEN 'boolean' THEN (CASE WHEN \(json)::text = 'true' THEN 1 ELSE 0 END)::float8 END)"
    }

    /// `ll_to_earth(lat, lng)` of the point at `path` in the document
    /// `document` (its `jsonb` column, `binaryBase`; SQL NULL when it
    /// holds no point): the expression a geo index
    /// stores and the one a query tests, written by this one function so
    /// the planner finds them equal.
    func earthPoint(document: String, path: [String], bind: (SQLValue) -> String) -> String {
        let (lng, lat) = pointCoordinates(document: document, path: path, bind: bind)
        let near = "abs(\(lat)) <= \(Self.farCoordinate) AND abs(\(lng)) <= \(Self.farCoordinate)"
        return "(CASE WHEN \(near) THEN ll_to_earth(\(lat), \(lng)) END)"
    }

    /// Beyond this many degrees a coordinate is no place on Earth: the
    /// haversine's `radians(x - cx)` and `ll_to_earth`'s `radians(x)` part
    /// by more than rounding there, so a spatial index cannot stand for the
    /// exact test. Such points are not in the GiST index; `farPoint` finds them.
    static let farCoordinate = "1e6"

    /// True for a point with a coordinate beyond `farCoordinate` (and for
    /// a few rows with one numeric coordinate that far and no point at all).
    /// One comparison on `farness`, so the planner estimates it from that
    /// expression's index statistics: far points are rare.
    func farPoint(document: String, path: [String], bind: (SQLValue) -> String) -> String {
        "(\(farness(document: document, path: path, bind: bind)) > \(Self.farCoordinate))"
    }

    /// The larger of the point's coordinates' magnitudes (a geo index's second, btree, index).
    func farness(document: String, path: [String], bind: (SQLValue) -> String) -> String {
        let (lng, lat) = pointCoordinates(document: document, path: path, bind: bind)
        return "greatest(abs(\(lat)), abs(\(lng)))"
    }

    /// The point's longitude and latitude as `float8` (NULL when not numbers), as `overPoint` reads them.
    func pointCoordinates(document: String, path: [String], bind: (SQLValue) -> String) -> (lng: String, lat: String) {
        let (lng, lat) = pointJSON(document: document, path: path, bind: bind)
        return (Self.geoNumber(lng), Self.geoNumber(lat))
    }

    /// The point's longitude and latitude as they are stored (`jsonb`), of a `[lng, lat]` or a GeoJSON point.
    func pointJSON(document: String, path: [String], bind: (SQLValue) -> String) -> (lng: String, lat: String) {
        let ref = ValueRef.path(base: document, steps: path.map { .key($0) })
        func coordinate(_ i: Int) -> String {
            let own = ValueRef.path(base: document, steps: path.map { .key($0) } + [.index(i)])
            let inGeoJSON = ValueRef.path(base: document, steps: path.map { .key($0) } + [.key("coordinates"), .index(i)])
            return "(CASE WHEN \(isArray(typeOf(ref, bind: bind))) THEN \(json(own, bind: bind)) ELSE \(json(inGeoJSON, bind: bind)) END)"
        }
        return (coordinate(0), coordinate(1))
    }
}
