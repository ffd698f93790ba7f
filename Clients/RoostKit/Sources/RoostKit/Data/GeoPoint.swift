import Foundation

/// A point as Roost stores it and its geo queries match it: `[longitude, latitude]`
/// in degrees. It encodes as that two-number array; it decodes from the array,
/// a GeoJSON point (`{"type": "Point", "coordinates": [lng, lat]}`) or the
/// `{"longitude", "latitude"}` object RoostKit 0.2.0 wrote (which no geo query matched).
///
/// ```swift
/// struct Place: Codable, Sendable { var name: String; var location: GeoPoint }
/// try await places.create(Place(name: "Coit Tower", location: GeoPoint(-122.4058, 37.8024)))
/// ```
public struct GeoPoint: Sendable, Hashable, Codable {
    public var longitude: Double
    public var latitude: Double

    public init(_ longitude: Double, _ latitude: Double) { self.longitude = longitude; self.latitude = latitude }

    /// The radius Roost's spherical distances use, in metres (as the server's `$centerSphere` and `$nearSphere`).
    static let earthRadius = 6_378_100.0

    var pair: JSONValue { [.number(longitude), .number(latitude)] }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(longitude)
        try c.encode(latitude)
    }

    public init(from decoder: Decoder) throws {
        if var pair = try? decoder.unkeyedContainer() {
            let lng = try pair.decode(Double.self), lat = try pair.decode(Double.self)
            self.init(lng, lat)
            return
        }
        let object = try decoder.container(keyedBy: Key.self)
        if let coordinates = try object.decodeIfPresent([Double].self, forKey: .coordinates), coordinates.count >= 2 {
            self.init(coordinates[0], coordinates[1])
        } else {
            self.init(try object.decode(Double.self, forKey: .longitude), try object.decode(Double.self, forKey: .latitude))
        }
    }

    private enum Key: String, CodingKey { case coordinates, longitude, latitude }
}
