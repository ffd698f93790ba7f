import JSON

/// A geo-indexed field must hold a point a geo query can find: `[longitude,
/// latitude]` (or GeoJSON `{"type": "Point", "coordinates": [longitude,
/// latitude]}`), longitude in [-180, 180] and latitude in [-90, 90]. Without
/// this check `[37.77, -122.48]` (latitude first, the classic mistake) or
/// `{"lat": …, "lng": …}` was stored and then never matched. A document
/// without the field, or with `null` there, is not in the index and is fine.
/// A write is judged only where it changes the field, so a row stored
/// before the check keeps its other edits possible.
public enum GeoPointCheck {
    /// Throws 400 (`StoreError.invalid`) for the first geo path of `paths`
    /// where `document` holds a value that is not a point, unless `previous`
    /// holds the same value there.
    public static func check(_ document: JSONObject, previous: JSONObject?, paths: some Sequence<String>) throws {
        for path in paths {
            let steps = path.split(separator: ".").map(String.init)
            guard let value = Self.value(in: document, steps), value != .null else { continue }
            if let previous, let old = Self.value(in: previous, steps), old == value { continue }
            if let problem = Self.problem(value) {
                throw StoreError.invalid("\(path) is geo-indexed and must be a point [longitude, latitude] (or GeoJSON {\"type\": \"Point\", \"coordinates\": [longitude, latitude]}): \(problem).")
            }
        }
    }

    /// What is wrong with `value` as a point, or nil when it is one.
    static func problem(_ value: JSONValue) -> String? {
        let coordinates: [JSONValue]
        switch value {
        case .array(let a): coordinates = a
        case .object(let o):
            guard o["type"] == .string("Point"), let a = o["coordinates"]?.arrayValue else {
                return "an object here must be GeoJSON with \"type\": \"Point\" and \"coordinates\""
            }
            coordinates = a
        default:
            return "got \(value.jsonText.prefix(40))"
        }
        guard coordinates.count == 2, let longitude = coordinates[0].doubleValue, let latitude = coordinates[1].doubleValue,
              longitude.isFinite, latitude.isFinite else {
            return "it needs exactly two numbers"
        }
        guard (-180...180).contains(longitude) else { return "longitude \(longitude) is outside [-180, 180]" }
        guard (-90...90).contains(latitude) else {
            return "latitude \(latitude) is outside [-90, 90] (latitude first? the order is [longitude, latitude])"
        }
        return nil
    }

    private static func value(in document: JSONObject, _ steps: [String]) -> JSONValue? {
        var current: JSONValue = .object(document)
        for key in steps {
            guard case .object(let o) = current, let next = o[key] else { return nil }
            current = next
        }
        return current
    }
}
