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

    /// A geo index, its points table once filled, and whether that table's
    /// k-nearest index is built (`PostgresGeoPoints.nearestIndex`).
    struct GeoIndexState {
        let id: Int64
        let points: String?
        let nearest: Bool
    }

    func geoIndex(_ layout: CollectionLayout, _ path: String) throws -> GeoIndexState? {
        guard let (id, filled) = try db.first("SELECT id, points FROM _indexes WHERE collection_id = $1::bigint AND path = $2::text AND kind = 'geo'",
                                              [.int(layout.tableID), .text(path)], { ($0.int(0) ?? 0, $0.bool(1) == true) }) else { return nil }
        guard filled else { return GeoIndexState(id: id, points: nil, nearest: false) }
        let points = PostgresGeoPoints.table(tableID: layout.tableID, indexID: id)
        if !nearestIndexes.contains(points) {
            let knn = PostgresGeoPoints.nearestIndex(tableID: layout.tableID, indexID: id)
            if try db.indexValidity(knn) == true {
                nearestIndexes.insert(points)
            }
        }
        return GeoIndexState(id: id, points: points, nearest: nearestIndexes.contains(points))
    }

    /// A condition that keeps the first `wanted` matches of a nearest-first list.
    ///
    /// A GiST index yields points nearest first: the points table's
    /// (`PostgresGeoPoints.plane`, a few pages of narrow rows, each match's
    /// row fetched by id for the condition) in an order near the
    /// great-circle order, or, before that table and index are built, the
    /// collection's own geo index by chord length (`<->` on `ll_to_earth`).
    /// Either way the first `wanted` matches in that order are `wanted`
    /// matches within the largest exact distance D among them, so the exact
    /// order's first `wanted` all lie within D too (however the walk's order
    /// differs from the exact one; the closer it is, the smaller D): the
    /// page is read from the rows inside a cap a little wider than D, and the
    /// far points the index leaves out, ordered by the exact distance and the
    /// row, as on SQLite. Nil when the field has no geo index or the centre
    /// is far (the list measures every row).
    func nearestBound(_ layout: CollectionLayout, _ point: NearPoint, distance: String, condition: String,
                      params: ParameterList, wanted: Int, probe: inout PostgresListStatement.Probe?) throws -> String? {
        guard wanted > 0, PostgresGeoIndex.isNear(point.lng), PostgresGeoIndex.isNear(point.lat),
              let index = try geoIndex(layout, point.path) else { return nil }
        let knn = ParameterList(params.values)
        let path = point.path.split(separator: ".").map(String.init)
        let lat = knn.bind(.double(point.lat)), lng = knn.bind(.double(point.lng))
        let walk: String
        if let points = index.points, index.nearest {
            let plane = PostgresGeoPoints.plane("k")
            let centre = PostgresGeoPoints.plane(lng: PostgresDialect.asFloat8(lng), lat: PostgresDialect.asFloat8(lat))
            walk = "FROM \(points) AS k JOIN \(layout.table) AS d ON d.rid = k.rid WHERE \(plane) IS NOT NULL AND \(condition) ORDER BY \(plane) <-> \(centre)"
        } else {
            let earth = dialect.earthPoint(document: FilterCompiler.documentColumn, path: path, bind: knn.bind)
            walk = "FROM \(layout.table) AS d WHERE \(condition) ORDER BY \(earth) <-> ll_to_earth(\(lat), \(lng))"
        }
        let sql = "SELECT max(n.distance)::text, count(*) FROM (SELECT \(distance) AS distance \(walk) LIMIT \(knn.bind(.int(Int64(wanted))))) AS n"
        probe = .init(sql: sql, params: knn.values)
        let (reach, found) = try db.first(sql, knn.values) { ($0.text(0), $0.int(1) ?? 0) } ?? (nil, 0)
        // No match in the index: only far points (outside it) may match.
        guard found > 0 else { return dialect.farPoint(document: FilterCompiler.documentColumn, path: path, bind: params.bind) }
        guard let reach, let metres = Double(reach) else { return nil }
        let region = GeoRegion.cap(centre: (point.lng, point.lat), radians: metres / FilterCompiler.earthRadiusMetres)
        return PostgresGeoIndex.candidates(path: path, region: region, bind: params.bind)
    }
}
