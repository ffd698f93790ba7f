/// A region a geo condition stays inside, in degrees: what another engine's
/// spatial index (PostgreSQL's GiST on `ll_to_earth`) is asked to narrow
/// the rows to, before the exact test runs on each.
public enum GeoRegion: Sendable, Equatable {
    /// The rectangle `$box` tests, on the coordinates as numbers.
    case box(minX: Double, maxX: Double, minY: Double, maxY: Double)
    /// The points within `radians` of `centre` (`[lng, lat]`) on the sphere.
    case cap(centre: (Double, Double), radians: Double)

    public static func == (a: GeoRegion, b: GeoRegion) -> Bool {
        switch (a, b) {
        case let (.box(a0, a1, a2, a3), .box(b0, b1, b2, b3)): return (a0, a1, a2, a3) == (b0, b1, b2, b3)
        case let (.cap(ac, ar), .cap(bc, br)): return ac == bc && ar == br
        default: return false
        }
    }
}

/// The centre of a filter's `$nearSphere` and the field it measures, for an
/// engine that orders by its own spatial index.
public struct NearPoint: Sendable, Equatable {
    public let path: String
    public let lng: Double
    public let lat: Double
}
