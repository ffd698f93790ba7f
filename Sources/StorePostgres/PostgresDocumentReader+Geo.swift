import Foundation
import Store

/// Geo on the reader: a filter's geo conditions use a declared geo index
/// (`PostgresGeoIndex`), and an unsorted `$nearSphere` first finds how far
/// its page reaches through the index's nearest-neighbour order.
extension PostgresDocumentReader {
    /// A compiler whose geo conditions narrow through the collection's geo indexes.
    func makeCompiler(_ layout: CollectionLayout?) -> FilterCompiler {
        let compiler = FilterCompiler(dialect: dialect)
        if let layout {
            compiler.geoCandidates = { [self] path, region, bind in
                // An index this node cannot see yet only costs speed: the exact test decides.
                guard (try? hasGeoIndex(layout, path.description)) == true else { return nil }
                return PostgresGeoIndex.candidates(path: path.components, region: region, bind: bind)
            }
        }
        return compiler
    }

    func hasGeoIndex(_ layout: CollectionLayout, _ path: String) throws -> Bool {
        try db.first("SELECT 1 FROM _indexes WHERE collection_id = $1::bigint AND path = $2::text AND kind = 'geo'",
                     [.int(layout.tableID), .text(path)]) { _ in true } ?? false
    }

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
