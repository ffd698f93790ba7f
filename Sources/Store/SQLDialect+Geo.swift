/// SQLite's geo SQL, the default of every dialect: `json_extract` gives
/// numbers (a JSON boolean as the integer 1 or 0), and SQLite's math
/// functions answer NULL where the result is not a number.
extension SQLDialect {
    public func supportsGeoShape(_ shape: String) -> Bool { true }

    public func overPoint(lng: String, lat: String, _ expr: (String, String) -> String) -> String {
        "(SELECT \(expr("p.x", "p.y")) FROM (SELECT \(lng) AS x, \(lat) AS y) AS p WHERE typeof(p.x) IN ('integer','real') AND typeof(p.y) IN ('integer','real'))"
    }

    public func greatCircle(_ x: String, _ y: String, cx: String, cy: String) -> String {
        "(2 * asin(min(1, sqrt(pow(sin(radians(\(y) - \(cy)) / 2), 2) + cos(radians(\(cy))) * cos(radians(\(y))) * pow(sin(radians(\(x) - \(cx)) / 2), 2)))))"
    }
}
