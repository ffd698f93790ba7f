import Store

/// Declared indexes on PostgreSQL (`indexes:` in the config, `IndexSpec`).
///
/// A value index on `field` is three expression indexes over the very
/// expressions `PostgresDialect` and the list's order write (on the `jsonb`
/// column `body`, so building and maintaining them parses no text; only
/// the sort key of an object or array reads `doc`'s text), so the planner
/// finds them: the sort key (bracket, number, text, rid, never NULL) for a
/// sorted page, a keyset page, and the key conditions a list writes for
/// equality and ranges on a field that holds no array
/// (`PostgresKeyConditions`), with extended statistics on its columns;
/// and, for a top-level field, (type, number) and (type, string) for the
/// generic conditions of a field that holds arrays (the filter's "or any
/// element of an array" arm is the type `array`, the same index's first column). A geo index is a GiST
/// index on the point's `ll_to_earth`, with an index of whether a
/// point's coordinates are too far out for it (`PostgresDialect.farPoint`). Declared paths are operator config,
/// not client input; they reach the DDL as escaped literals.
///
/// Many nodes: the whole change runs in one transaction under an advisory
/// lock, so nodes starting together apply it one after another and the
/// later ones find it done. `CREATE INDEX` blocks writes to the collection
/// while it builds (at start-up, before this node serves).
extension PostgresDocumentWriter {
    /// The advisory-lock key index changes hold ("Roost" + 6).
    static let indexLockKey: Int64 = 0x526F_6F73_7406

    /// Makes the collection's indexes exactly `specs`: creates and fills new
    /// ones, drops those no longer declared. Runs at start-up, before serving.
    public func applyIndexes(_ specs: Set<IndexSpec>, on collection: String) throws {
        geoPaths = [:]
        do {
            try db.transaction {
                try db.run("SELECT pg_advisory_xact_lock($1::bigint)", [.int(Self.indexLockKey)])
                let layout = try catalog.ensure(collection)
                let existing = try db.query("SELECT id, path, kind FROM _indexes WHERE collection_id = $1::bigint", [.int(layout.tableID)]) {
                    ($0.int(0) ?? 0, IndexSpec(path: $0.text(1) ?? "", kind: IndexSpec.Kind(rawValue: $0.text(2) ?? "") ?? .value))
                }
                for (id, spec) in existing where !specs.contains(spec) {
                    let names = Self.indexNames(tableID: layout.tableID, indexID: id, spec.kind).joined(separator: ", ")
                    try db.execute("DROP INDEX IF EXISTS \(names)")
                    if spec.kind != .geo { try db.execute("DROP STATISTICS IF EXISTS \(Self.statisticsName(tableID: layout.tableID, indexID: id))") }
                    if spec.kind == .geo { for sql in PostgresGeoPoints.dropSQL(table: layout.table, tableID: layout.tableID, indexID: id) { try db.execute(sql) } }
                    try db.run("DELETE FROM _indexes WHERE id = $1::bigint", [.int(id)])
                    logger.info("dropped index", metadata: ["collection": "\(collection)", "index": "\(spec)"])
                }
                // A kept value index whose sort-key index is missing (dropped by migration 8) is built again.
                var rebuilt: [IndexSpec] = []
                for (id, spec) in existing where specs.contains(spec) && spec.kind == .value {
                    let name = Self.indexNames(tableID: layout.tableID, indexID: id, spec.kind)[0]
                    guard try db.first("SELECT to_regclass($1::text) IS NULL", [.text(name)], { $0.bool(0) ?? false }) == true else { continue }
                    for sql in Self.createSQL(spec, table: layout.table, tableID: layout.tableID, indexID: id) { try db.execute(sql) }
                    rebuilt.append(spec)
                }
                // A kept geo index without its points table (made before migration 19) gets it, and
                // a points table without its k-nearest index (made before it) gets that.
                for (id, spec) in existing where specs.contains(spec) && spec.kind == .geo {
                    if try !hasPoints(indexID: id) {
                        try buildPoints(layout, indexID: id, path: spec.path, inTransaction: true)
                    } else if try !hasNearestIndex(tableID: layout.tableID, indexID: id) {
                        logger.info("building a geo index's k-nearest index (once; seconds a million points)",
                                    metadata: ["collection": "\(collection)", "index": "\(spec)"])
                        try buildNearestIndex(tableID: layout.tableID, indexID: id, concurrently: false)
                    } else {
                        continue
                    }
                    rebuilt.append(spec)
                }
                let added = specs.subtracting(existing.map(\.1))
                guard !added.isEmpty || !rebuilt.isEmpty else { return }
                if added.contains(where: { $0.kind == .geo }) { try createGeoExtensions() }
                for spec in added.sorted(by: { $0.description < $1.description }) {
                    let id = try db.first("INSERT INTO _indexes (collection_id, path, kind) VALUES ($1::bigint, $2::text, $3::text) RETURNING id",
                                          [.int(layout.tableID), .text(spec.path), .text(spec.kind.rawValue)]) { $0.int(0) ?? 0 } ?? 0
                    for sql in Self.createSQL(spec, table: layout.table, tableID: layout.tableID, indexID: id) { try db.execute(sql) }
                    if spec.kind == .geo { try buildPoints(layout, indexID: id, path: spec.path, inTransaction: true) }
                }
                // Expression indexes get their statistics from ANALYZE: without them the planner guesses.
                try db.execute("ANALYZE \(layout.table)")
                for (id, spec) in try geoIndexIDs(layout) where specs.contains(spec) {
                    try db.execute("ANALYZE \(PostgresGeoPoints.table(tableID: layout.tableID, indexID: id))")
                }
                logger.info("built indexes", metadata: ["collection": "\(collection)", "indexes": "\((added.map(\.description) + rebuilt.map(\.description)).sorted())"])
            }
        } catch {
            catalog.forgetAll()
            throw Self.wrap(error)
        }
    }

    /// Nothing to do on PostgreSQL (the server owns its WAL); SQLite checkpoints here on shutdown.
    public func checkpoint() {}

    /// `cube` and `earthdistance` (contrib): trusted extensions since
    /// PostgreSQL 13, so the database's owner (or any role with CREATE on
    /// it) may create them; created once, never dropped.
    func createGeoExtensions() throws {
        do {
            try db.execute("CREATE EXTENSION IF NOT EXISTS cube; CREATE EXTENSION IF NOT EXISTS earthdistance")
        } catch let error as PGError {
            throw PGError(sqlState: error.sqlState, message: "A geo index needs the PostgreSQL extensions cube and earthdistance "
                + "(contrib; a role with CREATE on the database may create them, or a superuser: "
                + "CREATE EXTENSION earthdistance CASCADE): \(error.message)")
        }
    }

    /// The collection's geo indexes, by id.
    func geoIndexIDs(_ layout: CollectionLayout) throws -> [(Int64, IndexSpec)] {
        try db.query("SELECT id, path FROM _indexes WHERE collection_id = $1::bigint AND kind = 'geo'", [.int(layout.tableID)]) {
            ($0.int(0) ?? 0, IndexSpec(path: $0.text(1) ?? "", kind: .geo))
        }
    }

    static func indexNames(tableID: Int64, indexID: Int64, _ kind: IndexSpec.Kind) -> [String] {
        let stem = "c_\(tableID)_\(kind == .geo ? "g" : "x")\(indexID)"
        return kind == .geo ? [stem, "\(stem)_far"] : ["\(stem)_s", "\(stem)_n", "\(stem)_t"]
    }

    /// The extended statistics on a value index's key columns.
    static func statisticsName(tableID: Int64, indexID: Int64) -> String { "c_\(tableID)_x\(indexID)_st" }

    /// The statements that build `spec`'s indexes.
    static func createSQL(_ spec: IndexSpec, table: String, tableID: Int64, indexID: Int64) -> [String] {
        let names = indexNames(tableID: tableID, indexID: indexID, spec.kind)
        let path = spec.path.split(separator: ".").map(String.init)
        if spec.kind == .geo {
            return PostgresGeoIndex.createSQL(names: names, table: table, path: path, literal: literal)
        }
        let sort = PostgresDocumentReader.orderColumns(spec.path, ascending: true, document: "doc", literal).map { "(\($0.sql))" }
        var statements = ["CREATE INDEX IF NOT EXISTS \(names[0]) ON \(table) (\((sort + ["rid"]).joined(separator: ", ")))"]
        // The key's columns depend on each other (a string's number is 0, a number's text
        // ''): without these statistics the planner multiplies their selectivities.
        statements.append("CREATE STATISTICS IF NOT EXISTS \(statisticsName(tableID: tableID, indexID: indexID)) (dependencies, mcv) ON \(sort.joined(separator: ", ")) FROM \(table)")
        // A dotted path's filter walks arrays (a LATERAL per step), which no index serves; its sort still does.
        if path.count == 1 {
            let dialect = PostgresDialect()
            let ref = ValueRef.path(base: "doc", steps: [.key(path[0])])
            let type = dialect.typeOf(ref, bind: literal)
            let number = dialect.numberOf(dialect.valueOf(ref, bind: literal))
            let string = dialect.stringOf(dialect.valueOf(ref, bind: literal))
            statements.append("CREATE INDEX IF NOT EXISTS \(names[1]) ON \(table) ((\(type)), (\(number)))")
            statements.append("CREATE INDEX IF NOT EXISTS \(names[2]) ON \(table) ((\(type)), (\(string)))")
        }
        return statements
    }

    /// A value written into DDL as the constant a prepared statement's
    /// parameter becomes, with the same cast (`PostgresDialect.placeholder`):
    /// an escape string, so backslashes and quotes mean themselves whatever
    /// `standard_conforming_strings` says.
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .int(let i): return "\(i)::bigint"
        case .double(let d): return "'\(d)'::numeric"
        case .text(let s): return "E'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'::text"
        }
    }
}
