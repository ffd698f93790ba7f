import Store

/// A geo index's points table on PostgreSQL, as SQLite's points table beside
/// its R*Tree: one row `(rid, x, y)` per document whose field holds a point,
/// `x` and `y` the very `float8` numbers the exact geo tests read from the
/// document (`PostgresDialect.pointCoordinates`; a row whose field holds no
/// point has none). Geo tests read these two columns instead of parsing the
/// document (`FilterCompiler.pointTable`), and a `$box` list in row order
/// walks the table's primary key, an index-only scan that holds `x` and `y`
/// (`PostgresDocumentReader+BoxWalk`). A GiST index on the points
/// (`plane`) serves a `$nearSphere` probe as a k-nearest walk
/// of this narrow table (`PostgresDocumentReader.nearestBound`), not of the
/// collection's wide rows.
///
/// Kept by statement triggers on the collection's table, in the writing
/// statement's transaction, whatever wrote (a create, a `/_batch`'s
/// multi-row INSERT, an update, a delete). A build fills it after its
/// triggers exist, locking the rows it reads (`FOR SHARE`): a write racing
/// the fill waits for it, then sets its own row. Readers use the table only
/// once `_indexes.points` says it is filled (migration 19).
enum PostgresGeoPoints {
    static func table(tableID: Int64, indexID: Int64) -> String { "c_\(tableID)_g\(indexID)_p" }
    static func function(tableID: Int64, indexID: Int64) -> String { "c_\(tableID)_g\(indexID)_sync" }

    /// The point of row `alias` of a points table, for the k-nearest index:
    /// `(x, y)` in degrees as stored, NULL for a far point
    /// (`PostgresDialect.farCoordinate`). Written once so queries match the
    /// index. Its order is only near the great-circle order (a degree of
    /// longitude counts as one of latitude; across the antimeridian points
    /// look far apart), and need be no more: a probe takes the exact
    /// distances of the matches it finds (`PostgresDocumentReader.nearestBound`),
    /// so a poorer order costs a wider cap, never a wrong page. A 2-D point,
    /// so the index is built sorted (seconds for a million points, against
    /// most of a minute for the `cube` of `ll_to_earth`) and a probe reads a
    /// few pages (0.15 ms against 1 ms at a million points, in `psql`).
    static func plane(_ alias: String) -> String {
        let far = PostgresDialect.farCoordinate
        return "(CASE WHEN abs(\(alias).y) <= \(far) AND abs(\(alias).x) <= \(far) THEN point(\(alias).x, \(alias).y) END)"
    }

    /// The centre `(lng, lat)` (bound parameters) as a `plane` point.
    static func plane(lng: String, lat: String) -> String { "point(\(lng), \(lat))" }

    /// The triggers: name suffix, event and transition tables.
    static let triggers = [("ins", "INSERT", "NEW TABLE AS new_rows"), ("upd", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
                           ("del", "DELETE", "OLD TABLE AS old_rows")]

    /// The points of the rows of `source` (a table or transition table with `rid` and `body`), as `(rid, x, y)`.
    static func points(of source: String, path: [String]) -> String {
        let (x, y) = PostgresDialect().pointCoordinates(document: "n.doc", path: path, bind: PostgresDocumentWriter.literal)
        return "SELECT p.rid, p.x, p.y FROM (SELECT n.rid, \(x) AS x, \(y) AS y FROM \(source)) AS p WHERE p.x IS NOT NULL AND p.y IS NOT NULL"
    }

    static func upsert(into points: String, _ select: String) -> String {
        "INSERT INTO \(points) (rid, x, y) \(select) ON CONFLICT (rid) DO UPDATE SET x = EXCLUDED.x, y = EXCLUDED.y"
    }

    /// The k-nearest GiST index of a points table (on `plane`).
    static func nearestIndex(tableID: Int64, indexID: Int64) -> String { table(tableID: tableID, indexID: indexID) + "_near" }

    static func nearestIndexSQL(tableID: Int64, indexID: Int64) -> String {
        let points = table(tableID: tableID, indexID: indexID)
        return "CREATE INDEX IF NOT EXISTS \(nearestIndex(tableID: tableID, indexID: indexID)) ON \(points) USING gist (\(plane(points)))"
    }

    /// The table, its trigger function and triggers on `table` (the collection's), empty until filled.
    static func createSQL(table: String, tableID: Int64, indexID: Int64, path: [String]) -> [String] {
        let points = Self.table(tableID: tableID, indexID: indexID), function = Self.function(tableID: tableID, indexID: indexID)
        return ["CREATE TABLE IF NOT EXISTS \(points) (rid bigint NOT NULL, x float8 NOT NULL, y float8 NOT NULL, PRIMARY KEY (rid) INCLUDE (x, y))",
                """
                CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $f$
                BEGIN
                    IF TG_OP <> 'INSERT' THEN DELETE FROM \(points) AS s USING old_rows AS o WHERE s.rid = o.rid; END IF;
                    IF TG_OP <> 'DELETE' THEN \(upsert(into: points, Self.points(of: "new_rows AS n", path: path))); END IF;
                    RETURN NULL;
                END $f$
                """]
            + triggers.flatMap { suffix, event, tables in
                ["DROP TRIGGER IF EXISTS \(points)_\(suffix) ON \(table)",
                 "CREATE TRIGGER \(points)_\(suffix) AFTER \(event) ON \(table) REFERENCING \(tables) FOR EACH STATEMENT EXECUTE FUNCTION \(function)()"]
            }
    }

    /// Fills the rows with `rid` in (`$1`, `$2`], locked against a racing write while they are read.
    static func fillSQL(table: String, tableID: Int64, indexID: Int64, path: [String]) -> String {
        upsert(into: Self.table(tableID: tableID, indexID: indexID),
               points(of: "(SELECT * FROM \(table) AS r WHERE r.rid > $1::bigint AND r.rid <= $2::bigint FOR SHARE OF r) AS n", path: path))
    }

    static func dropSQL(table: String, tableID: Int64, indexID: Int64) -> [String] {
        let points = Self.table(tableID: tableID, indexID: indexID)
        return triggers.map { "DROP TRIGGER IF EXISTS \(points)_\($0.0) ON \(table)" }
            + ["DROP FUNCTION IF EXISTS \(function(tableID: tableID, indexID: indexID))()", "DROP TABLE IF EXISTS \(points)"]
    }
}

extension PostgresDocumentWriter {
    /// Rows a points table's fill reads per transaction.
    static let pointsFillRows: Int64 = 20_000

    /// Makes geo index `indexID`'s points table, fills it and builds its
    /// k-nearest index, then marks it ready. Inside a transaction (start-up)
    /// it is one step; outside (a build while writes go on) the triggers come
    /// first, in a transaction of their own, the fill runs a transaction per
    /// `pointsFillRows` rows, and the index is built concurrently.
    func buildPoints(_ layout: CollectionLayout, indexID: Int64, path: String, inTransaction: Bool) throws {
        let components = path.split(separator: ".").map(String.init)
        let create = PostgresGeoPoints.createSQL(table: layout.table, tableID: layout.tableID, indexID: indexID, path: components)
        if inTransaction { for sql in create { try db.execute(sql) } } else { try db.transaction { for sql in create { try db.execute(sql) } } }
        // Rows written from here on set their own points: the fill covers those before.
        let last = try db.first("SELECT coalesce(max(rid), 0) FROM \(layout.table)", []) { $0.int(0) ?? 0 } ?? 0
        let fill = PostgresGeoPoints.fillSQL(table: layout.table, tableID: layout.tableID, indexID: indexID, path: components)
        var from: Int64 = 0
        while from < last {
            let to = inTransaction ? last : min(last, from + Self.pointsFillRows)
            if inTransaction { try db.run(fill, [.int(from), .int(to)]) } else { try db.transaction { try db.run(fill, [.int(from), .int(to)]) } }
            from = to
        }
        // After the fill: built sorted, not point by point.
        try buildNearestIndex(tableID: layout.tableID, indexID: indexID, concurrently: !inTransaction)
        try db.run("UPDATE _indexes SET points = TRUE WHERE id = $1::bigint", [.int(indexID)])
        if !inTransaction { try db.execute("ANALYZE \(PostgresGeoPoints.table(tableID: layout.tableID, indexID: indexID))") }
    }

    /// Whether geo index `indexID`'s points table has a valid k-nearest index
    /// (a points table made before it has none; a cut-short concurrent build leaves an invalid one).
    func hasNearestIndex(tableID: Int64, indexID: Int64) throws -> Bool {
        try db.indexValidity(PostgresGeoPoints.nearestIndex(tableID: tableID, indexID: indexID)) == true
    }

    /// Builds the k-nearest index of a filled points table made before it
    /// (`CONCURRENTLY` outside a transaction, while writes go on), replacing
    /// an invalid one a cut-short build left.
    func buildNearestIndex(tableID: Int64, indexID: Int64, concurrently: Bool) throws {
        let how = concurrently ? "CONCURRENTLY " : ""
        try db.execute("DROP INDEX \(how)IF EXISTS \(PostgresGeoPoints.nearestIndex(tableID: tableID, indexID: indexID))")
        try db.execute(PostgresGeoPoints.nearestIndexSQL(tableID: tableID, indexID: indexID)
            .replacingOccurrences(of: "CREATE INDEX IF NOT EXISTS", with: "CREATE INDEX \(how)IF NOT EXISTS"))
    }

    /// Whether geo index `indexID`'s points table is filled.
    func hasPoints(indexID: Int64) throws -> Bool {
        try db.first("SELECT points FROM _indexes WHERE id = $1::bigint", [.int(indexID)]) { $0.bool(0) ?? false } ?? false
    }
}
