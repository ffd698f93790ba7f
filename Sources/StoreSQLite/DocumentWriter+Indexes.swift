import JSON
import Store

/// One row of a collection's multikey index (`x_N`): a scalar found at
/// `path` in the document whose row is `rid`.
struct IndexEntry: Hashable {
    let path: String
    let valueClass: IndexValueClass
    let value: SQLValue
}

extension DocumentWriter {
    /// The multikey entries `document` has, and the indexed paths through
    /// which it reaches an array.
    func indexEntries(_ layout: CollectionLayout, _ document: JSONObject) -> (entries: Set<IndexEntry>, multikey: Set<String>) {
        var entries = Set<IndexEntry>()
        var multikey = Set<String>()
        for path in layout.maintainedPaths {
            let steps = path.split(separator: ".").map(String.init)
            if PathValues.reachesArray(in: document, path: steps) { multikey.insert(path) }
            for value in PathValues.candidates(in: document, path: steps) {
                guard let (cls, sql) = IndexValueClass.classify(value) else { continue }
                entries.insert(IndexEntry(path: path, valueClass: cls, value: sql))
            }
        }
        return (entries, multikey)
    }

    /// Writes the multikey and geo entries of a new document.
    func writeIndexEntries(_ layout: CollectionLayout, rowID: Int64, _ document: JSONObject) throws {
        try updateIndexEntries(layout, rowID: rowID, from: nil, to: document)
    }

    /// Moves the index entries of row `rowID` from `old` to `new` (nil: no
    /// document). Only entries that differ are touched. Entries are found by
    /// their full key, recomputed from the old document, so the index needs
    /// no second B-tree by row id.
    func updateIndexEntries(_ layout: CollectionLayout, rowID: Int64, from old: JSONObject?, to new: JSONObject?) throws {
        if !layout.maintainedPaths.isEmpty {
            let before = old.map { indexEntries(layout, $0) } ?? (entries: [], multikey: [])
            let after = new.map { indexEntries(layout, $0) } ?? (entries: [], multikey: [])
            let table = layout.indexTable
            let gone = before.entries.subtracting(after.entries)
            if !gone.isEmpty {
                let delete = try db.prepare("DELETE FROM \(table) WHERE path = ?1 AND k = ?2 AND v = ?3 AND rid = ?4")
                for entry in gone {
                    try delete.run([.text(entry.path), .int(entry.valueClass.rawValue), entry.value, .int(rowID)])
                }
            }
            let insert = try db.prepare("INSERT OR IGNORE INTO \(table) (path, k, v, rid) VALUES (?1, ?2, ?3, ?4)")
            for path in after.multikey.subtracting(before.multikey) {
                // A sentinel row (k = 0, never a value class) marks the path multikey, for good
                // (the old document, if it reached an array there, already wrote it).
                try insert.run([.text(path), .int(0), .int(0), .int(0)])
            }
            for entry in after.entries.subtracting(before.entries) {
                try insert.run([.text(entry.path), .int(entry.valueClass.rawValue), entry.value, .int(rowID)])
            }
        }
        let readersBefore = old.map(AccessScope.readers) ?? [], readersAfter = new.map(AccessScope.readers) ?? []
        if readersBefore != readersAfter {
            let delete = try db.prepare("DELETE FROM \(layout.aclTable) WHERE uid = ?1 AND rid = ?2")
            for uid in readersBefore.subtracting(readersAfter) { try delete.run([.text(uid), .int(rowID)]) }
            let insert = try db.prepare("INSERT OR IGNORE INTO \(layout.aclTable) (uid, rid) VALUES (?1, ?2)")
            for uid in readersAfter.subtracting(readersBefore) { try insert.run([.text(uid), .int(rowID)]) }
        }
        for (path, table) in layout.maintainedGeoTables {
            let steps = path.split(separator: ".").map(String.init)
            let oldPoint = old.flatMap { PathValues.point(in: $0, path: steps) }
            let newPoint = new.flatMap { PathValues.point(in: $0, path: steps) }
            if let oldPoint, let newPoint, oldPoint == newPoint { continue }
            let points = CollectionLayout.pointTable(table)
            if oldPoint != nil {
                try db.prepare("DELETE FROM \(table) WHERE id = ?1").run([.int(rowID)])
                try db.prepare("DELETE FROM \(points) WHERE rid = ?1").run([.int(rowID)])
            }
            if let (x, y) = newPoint {
                try db.prepare("INSERT INTO \(table) (id, minX, maxX, minY, maxY) VALUES (?1, ?2, ?2, ?3, ?3)")
                    .run([.int(rowID), .double(x), .double(y)])
                try db.prepare("INSERT INTO \(points) (rid, x, y) VALUES (?1, ?2, ?3)").run([.int(rowID), .double(x), .double(y)])
            }
        }
    }

    /// Makes the collection's indexes exactly `specs`: creates and fills new
    /// ones, drops those no longer declared. Runs at start-up, before serving.
    public func applyIndexes(_ specs: Set<IndexSpec>, on collection: String) throws {
        try db.transaction {
            let layout = try catalog.ensure(collection)
            // An index a background build left unfinished (`buildIndexesStep`) is built again here, whole.
            let all = try db.prepare("SELECT id, path, kind, state FROM _indexes WHERE collection_id = ?1").rows([.int(layout.tableID)]) {
                ($0.int(0), IndexSpec(path: $0.text(1), kind: IndexSpec.Kind(rawValue: $0.text(2)) ?? .value), $0.text(3) == "ready")
            }
            let existing = all.filter(\.2).map { ($0.0, $0.1) }
            for (indexID, spec, ready) in all where !ready {
                try dropIndex(layout, id: indexID, spec: spec)
            }
            for (indexID, spec) in existing where !specs.contains(spec) {
                if spec.kind == .geo {
                    let geoTable = "g_\(layout.tableID)_\(indexID)"
                    try db.exec("DROP TABLE IF EXISTS \(geoTable); DROP TABLE IF EXISTS \(CollectionLayout.pointTable(geoTable))")
                } else {
                    try db.prepare("DELETE FROM \(layout.indexTable) WHERE path = ?1").run([.text(spec.path)])
                    try db.exec("DROP INDEX IF EXISTS \(Catalog.sortIndexName(tableID: layout.tableID, indexID: indexID))")
                }
                try db.prepare("DELETE FROM _indexes WHERE id = ?1").run([.int(indexID)])
                logger.info("dropped index", metadata: ["collection": "\(collection)", "index": "\(spec)"])
            }
            let known = Set(existing.map(\.1))
            let added = specs.subtracting(known)
            guard !added.isEmpty else { catalog.forget(collection); return }
            for spec in added {
                try db.prepare("INSERT INTO _indexes (collection_id, path, kind) VALUES (?1, ?2, ?3)")
                    .run([.int(layout.tableID), .text(spec.path), .text(spec.kind.rawValue)])
                if spec.kind == .geo {
                    let geoTable = "g_\(layout.tableID)_\(db.lastInsertRowID)"
                    try db.exec("CREATE VIRTUAL TABLE \(geoTable) USING rtree(id, minX, maxX, minY, maxY); \(Catalog.pointTableSQL(geoTable))")
                } else {
                    try db.exec(Catalog.sortIndexSQL(tableID: layout.tableID, indexID: db.lastInsertRowID, path: spec.path))
                }
            }
            catalog.forget(collection)
            guard let fresh = try catalog.layout(collection) else { return }
            // Fill only the new indexes, from every stored document.
            let onlyNew = CollectionLayout(
                name: collection, tableID: fresh.tableID,
                indexedPaths: Set(added.filter { $0.kind == .value }.map(\.path)),
                geoTables: fresh.geoTables.filter { path, _ in added.contains(IndexSpec(path: path, kind: .geo)) })
            let rows = try db.prepare("SELECT rid, doc FROM \(fresh.table)").rows { ($0.int(0), $0.text(1)) }
            for (rowID, text) in rows {
                guard case .object(let document) = try JSONParser.parse(text) else { continue }
                try writeIndexEntries(onlyNew, rowID: rowID, document)
            }
            logger.info("built indexes", metadata: ["collection": "\(collection)", "indexes": "\(added.map(\.description).sorted())", "documents": "\(rows.count)"])
        }
    }

    /// Checkpoints the WAL into the main file; called on shutdown.
    public func checkpoint() {
        try? db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
