import Foundation
import Store

/// Geo on the reader: a filter's geo conditions use a declared geo index
/// (`PostgresGeoIndex`), and an unsorted `$nearSphere` first finds how far
/// its page reaches through the index's nearest-neighbour order.
extension PostgresDocumentReader {
    /// A compiler whose geo conditions narrow through the collection's geo
    /// indexes and read their points tables (`PostgresGeoPoints`).
    func makeCompiler(_ layout: CollectionLayout?) -> FilterCompiler {
        let compiler = FilterCompiler(dialect: dialect)
        if let layout {
            // Looked up once a compile: an index this node cannot see yet only costs speed.
            var known: [String: GeoIndexState?] = [:]
            let lookup = { [self] (path: FieldPath) -> GeoIndexState? in
                if let found = known[path.description] { return found }
                let state = try? geoIndex(layout, path.description)
                known[path.description] = state
                return state
            }
            compiler.geoCandidates = { path, region, bind in
                guard lookup(path) != nil else { return nil }
                return PostgresGeoIndex.candidates(path: path.components, region: region, bind: bind)
            }
            compiler.pointTable = { path in lookup(path)?.points }
        }
        return compiler
    }

    /// A geo index, and its points table once filled.
    struct GeoIndexState {
        let id: Int64
        let points: String?
    }

    func geoIndex(_ layout: CollectionLayout, _ path: String) throws -> GeoIndexState? {
        try db.first("SELECT id, points FROM _indexes WHERE collection_id = $1::bigint AND path = $2::text AND kind = 'geo'",
                     [.int(layout.tableID), .text(path)]) { row in
            let id = row.int(0) ?? 0
            return GeoIndexState(id: id, points: row.bool(1) == true ? PostgresGeoPoints.table(tableID: layout.tableID, indexID: id) : nil)
        } ?? nil
    }

    func hasGeoIndex(_ layout: CollectionLayout, _ path: String) throws -> Bool { try geoIndex(layout, path) != nil }

    /// A condition that keeps the first `wanted` matches of a nearest-first list.
    ///
    /// The GiST index yields rows nearest first by chord length
    /// (`<->` on `ll_to_earth`), which orders as the great-circle distance
    /// does, up to rounding. So the first `wanted` matches in that order
    /// are `wanted` matches within the largest exact distance D among them,
    /// and the exact order's first `wanted` all lie within D too (whatever
    /// the chord order's rounding): the page is read from the rows inside a
    /// cap a little wider than D, and the far points the index leaves out,
    /// ordered by the exact distance and the row, as on SQLite. Nil when the
    /// field has no geo index or the centre is far (the list measures every row).
    func nearestBound(_ layout: CollectionLayout, _ point: NearPoint, distance: String, condition: String,
                      params: ParameterList, wanted: Int, probe: inout PostgresListStatement.Probe?) throws -> String? {
        guard wanted > 0, PostgresGeoIndex.isNear(point.lng), PostgresGeoIndex.isNear(point.lat), try hasGeoIndex(layout, point.path) else { return nil }
        let knn = ParameterList(params.values)
        let path = point.path.split(separator: ".").map(String.init)
        let earth = dialect.earthPoint(document: FilterCompiler.documentColumn, path: path, bind: knn.bind)
        let centre = "ll_to_earth(\(knn.bind(.double(point.lat))), \(knn.bind(.double(point.lng))))"
        let sql = "SELECT max(n.distance)::text, count(*) FROM (SELECT \(distance) AS distance FROM \(layout.table) AS d"
            + " WHERE \(condition) ORDER BY \(earth) <-> \(centre) LIMIT \(knn.bind(.int(Int64(wanted))))) AS n"
        probe = .init(sql: sql, params: knn.values)
        let (reach, found) = try db.first(sql, knn.values) { ($0.text(0), $0.int(1) ?? 0) } ?? (nil, 0)
        // No match in the index: only far points (outside it) may match.
        guard found > 0 else { return dialect.farPoint(document: FilterCompiler.documentColumn, path: path, bind: params.bind) }
        guard let reach, let metres = Double(reach) else { return nil }
        let region = GeoRegion.cap(centre: (point.lng, point.lat), radians: metres / FilterCompiler.earthRadiusMetres)
        return PostgresGeoIndex.candidates(path: path, region: region, bind: params.bind)
    }
}
