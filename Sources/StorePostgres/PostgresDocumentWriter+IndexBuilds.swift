import Store

/// Indexes built and dropped while Roost runs on PostgreSQL, on a
/// connection of their own (never the writer's: `CREATE INDEX
/// CONCURRENTLY` runs outside a transaction and takes as long as the table
/// is big, while writes go on). One node at a time builds, under a session
/// advisory lock; the others find the lock taken and look again later. An
/// index's row in `_indexes` is written first: a plan that expects the
/// index only runs slower until it exists, never differently.
extension PostgresDocumentWriter {
    public func buildIndexesStep(_ specs: Set<IndexSpec>, on collection: String, rows: Int, dropGrace: Double) throws -> IndexBuildProgress {
        do {
            guard try db.first("SELECT pg_try_advisory_lock($1::bigint)", [.int(Self.indexLockKey)], { $0.bool(0) ?? false }) == true else {
                return IndexBuildProgress(entries: try indexEntries(collection, building: []), finished: false)
            }
            defer { _ = try? db.first("SELECT pg_advisory_unlock($1::bigint)", [.int(Self.indexLockKey)]) { _ in () } }
            let layout = try db.transaction { try catalog.ensure(collection) }
            let existing = try db.query("SELECT id, path, kind FROM _indexes WHERE collection_id = $1::bigint", [.int(layout.tableID)]) {
                ($0.int(0) ?? 0, IndexSpec(path: $0.text(1) ?? "", kind: IndexSpec.Kind(rawValue: $0.text(2) ?? "") ?? .value))
            }
            var changed = false
            for (id, spec) in existing where !specs.contains(spec) {
                try db.run("DELETE FROM _indexes WHERE id = $1::bigint", [.int(id)])
                for name in Self.indexNames(tableID: layout.tableID, indexID: id, spec.kind) {
                    try db.execute("DROP INDEX CONCURRENTLY IF EXISTS \(name)")
                }
                if spec.kind != .geo { try db.execute("DROP STATISTICS IF EXISTS \(Self.statisticsName(tableID: layout.tableID, indexID: id))") }
                if spec.kind == .geo { for sql in PostgresGeoPoints.dropSQL(table: layout.table, tableID: layout.tableID, indexID: id) { try db.execute(sql) } }
                changed = true
                logger.info("dropped index", metadata: ["collection": "\(collection)", "index": "\(spec)"])
            }
            let known = Dictionary(existing.map { ($0.1, $0.0) }, uniquingKeysWith: { a, _ in a })
            for spec in specs.sorted(by: { $0.description < $1.description }) {
                let id: Int64
                if let found = known[spec] {
                    // Built whole, by this node or another, unless a build was cut short (an invalid or missing index).
                    guard try !isBuilt(Self.createdNames(spec, table: layout.table, tableID: layout.tableID, indexID: found)) else {
                        // A geo index made before its points table (migration 19) gets one, and a
                        // points table made before its k-nearest index gets that.
                        if spec.kind == .geo, try !hasPoints(indexID: found) {
                            try buildPoints(layout, indexID: found, path: spec.path, inTransaction: false)
                            changed = true
                        } else if spec.kind == .geo, try !hasNearestIndex(tableID: layout.tableID, indexID: found) {
                            try buildNearestIndex(tableID: layout.tableID, indexID: found, concurrently: true)
                            changed = true
                        }
                        continue
                    }
                    id = found
                } else {
                    if spec.kind == .geo { try createGeoExtensions() }
                    id = try db.first("INSERT INTO _indexes (collection_id, path, kind) VALUES ($1::bigint, $2::text, $3::text) RETURNING id",
                                      [.int(layout.tableID), .text(spec.path), .text(spec.kind.rawValue)]) { $0.int(0) ?? 0 } ?? 0
                }
                logger.info("building index", metadata: ["collection": "\(collection)", "index": "\(spec)"])
                for name in Self.indexNames(tableID: layout.tableID, indexID: id, spec.kind) where try isInvalid(name) {
                    try db.execute("DROP INDEX CONCURRENTLY IF EXISTS \(name)")
                }
                for sql in Self.createSQL(spec, table: layout.table, tableID: layout.tableID, indexID: id) {
                    try db.execute(sql.replacingOccurrences(of: "CREATE INDEX IF NOT EXISTS", with: "CREATE INDEX CONCURRENTLY IF NOT EXISTS"))
                }
                if spec.kind == .geo { try buildPoints(layout, indexID: id, path: spec.path, inTransaction: false) }
                try db.execute("ANALYZE \(layout.table)")
                changed = true
                logger.info("built index", metadata: ["collection": "\(collection)", "index": "\(spec)"])
            }
            return IndexBuildProgress(entries: try indexEntries(collection, building: []), changedLayout: changed, finished: true)
        } catch {
            catalog.forgetAll()
            throw Self.wrap(error)
        }
    }

    /// The collection's indexes as `_indexes` lists them (all ready: a build here is one step).
    private func indexEntries(_ collection: String, building: Set<IndexSpec>) throws -> [IndexBuildProgress.Entry] {
        try db.query("""
            SELECT i.path, i.kind FROM _indexes i JOIN _collections c ON c.id = i.collection_id WHERE c.name = $1::text ORDER BY i.id
            """, [.text(collection)]) {
            let spec = IndexSpec(path: $0.text(0) ?? "", kind: IndexSpec.Kind(rawValue: $0.text(1) ?? "") ?? .value)
            return IndexBuildProgress.Entry(spec: spec, state: building.contains(spec) ? .building : .ready)
        }
    }

    /// The indexes `createSQL` makes for `spec` (a dotted path's value index has only its sort key).
    static func createdNames(_ spec: IndexSpec, table: String, tableID: Int64, indexID: Int64) -> [String] {
        createSQL(spec, table: table, tableID: tableID, indexID: indexID).compactMap { sql in
            let words = sql.split(separator: " ")
            return words.starts(with: ["CREATE", "INDEX", "IF", "NOT", "EXISTS"]) && words.count > 5 ? String(words[5]) : nil
        }
    }

    private func isBuilt(_ names: [String]) throws -> Bool {
        try names.allSatisfy { try db.indexValidity($0) == true }
    }

    private func isInvalid(_ name: String) throws -> Bool { try db.indexValidity(name) == false }
}

extension PGConnection {
    /// Whether index `name` is valid (false: a cut-short concurrent build left it), nil when there is none.
    func indexValidity(_ name: String) throws -> Bool? {
        try first("SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass($1::text)", [.text(name)]) { $0.bool(0) } ?? nil
    }
}
