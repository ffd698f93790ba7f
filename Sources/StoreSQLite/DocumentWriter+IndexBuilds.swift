import Foundation
import JSON
import Store

/// Indexes built and dropped while Roost runs, in short writer steps
/// (docs/COLLECTIONS.md): a new index is registered `building` (writes keep
/// it up to date from then on), filled `rows` documents per step in row
/// order, and made `ready` by a last step that creates its sort index; a
/// dropped one turns `dropping` (reads stop using it) and is removed once
/// `dropGrace` has passed, so no read that began before can still use it.
extension DocumentWriter {
    public func buildIndexesStep(_ specs: Set<IndexSpec>, on collection: String, rows: Int, dropGrace: Double) throws -> IndexBuildProgress {
        let layout = try catalog.ensure(collection)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var progress = IndexBuildProgress()
        var existing = try db.prepare("SELECT id, path, kind, state, progress FROM _indexes WHERE collection_id = ?1 ORDER BY id")
            .rows([.int(layout.tableID)]) { r in
                (id: r.int(0), spec: IndexSpec(path: r.text(1), kind: IndexSpec.Kind(rawValue: r.text(2)) ?? .value),
                 state: IndexBuildProgress.State(rawValue: r.text(3)) ?? .ready, progress: r.int(4))
            }
        let setState = try db.prepare("UPDATE _indexes SET state = ?2, progress = ?3 WHERE id = ?1")
        for (n, index) in existing.enumerated() {
            switch (specs.contains(index.spec), index.state) {
            case (false, .building):
                try dropIndex(layout, id: index.id, spec: index.spec)
                progress.changedLayout = true
            case (false, .ready):
                try setState.run([.int(index.id), .text(IndexBuildProgress.State.dropping.rawValue), .int(now)])
                existing[n].state = .dropping
                progress.changedLayout = true
            case (false, .dropping) where Double(now - index.progress) >= dropGrace * 1000:
                try dropIndex(layout, id: index.id, spec: index.spec)
            case (true, .dropping):
                // Wanted again before it went: every write kept it meanwhile.
                try setState.run([.int(index.id), .text(IndexBuildProgress.State.ready.rawValue), .int(0)])
                existing[n].state = .ready
                progress.changedLayout = true
            default:
                break
            }
        }
        for spec in specs.subtracting(existing.map(\.spec)).sorted(by: { $0.description < $1.description }) {
            try db.prepare("INSERT INTO _indexes (collection_id, path, kind, state, progress) VALUES (?1, ?2, ?3, 'building', 0)")
                .run([.int(layout.tableID), .text(spec.path), .text(spec.kind.rawValue)])
            let id = db.lastInsertRowID
            if spec.kind == .geo {
                let geoTable = "g_\(layout.tableID)_\(id)"
                try db.exec("CREATE VIRTUAL TABLE \(geoTable) USING rtree(id, minX, maxX, minY, maxY); \(Catalog.pointTableSQL(geoTable))")
            }
            existing.append((id: id, spec: spec, state: .building, progress: 0))
            logger.info("building index", metadata: ["collection": "\(collection)", "index": "\(spec)"])
        }
        catalog.forget(collection)
        let total = try db.prepare("SELECT coalesce(max(rid), 0) FROM \(layout.table)").firstRow { $0.int(0) } ?? 0
        // One building index at a time, oldest first: its step fills `rows` documents.
        if let n = existing.firstIndex(where: { $0.state == .building }) {
            let index = existing[n]
            let done = try fillIndex(collection, id: index.id, spec: index.spec, after: index.progress, rows: rows)
            if let last = done {
                try setState.run([.int(index.id), .text(IndexBuildProgress.State.building.rawValue), .int(last)])
                existing[n].progress = last
            } else {
                if index.spec.kind == .value {
                    try db.exec(Catalog.sortIndexSQL(tableID: layout.tableID, indexID: index.id, path: index.spec.path))
                }
                try setState.run([.int(index.id), .text(IndexBuildProgress.State.ready.rawValue), .int(0)])
                existing[n].state = .ready
                progress.changedLayout = true
                catalog.forget(collection)
                logger.info("built index", metadata: ["collection": "\(collection)", "index": "\(index.spec)"])
            }
        }
        let remaining = try db.prepare("SELECT path, kind, state, progress FROM _indexes WHERE collection_id = ?1 ORDER BY id")
            .rows([.int(layout.tableID)]) { r in
                IndexBuildProgress.Entry(spec: IndexSpec(path: r.text(0), kind: IndexSpec.Kind(rawValue: r.text(1)) ?? .value),
                                         state: IndexBuildProgress.State(rawValue: r.text(2)) ?? .ready,
                                         rowsDone: r.text(2) == "building" ? r.int(3) : 0, rowsTotal: r.text(2) == "building" ? total : 0)
            }
        progress.entries = remaining
        progress.finished = remaining.allSatisfy { $0.state == .ready } && Set(remaining.map(\.spec)) == specs
        return progress
    }

    /// Writes the entries of index `id` for up to `rows` documents past row `after`.
    /// - Returns: the last row filled, or nil when none was left.
    private func fillIndex(_ collection: String, id: Int64, spec: IndexSpec, after: Int64, rows: Int) throws -> Int64? {
        guard let full = try catalog.layout(collection) else { return nil }
        let batch = try db.prepare("SELECT rid, doc FROM \(full.table) WHERE rid > ?1 ORDER BY rid LIMIT ?2")
            .rows([.int(after), .int(Int64(rows))]) { ($0.int(0), $0.text(1)) }
        guard let last = batch.last?.0 else { return nil }
        let only = CollectionLayout(name: collection, tableID: full.tableID,
                                    indexedPaths: spec.kind == .value ? [spec.path] : [],
                                    geoTables: spec.kind == .geo ? [spec.path: "g_\(full.tableID)_\(id)"] : [:])
        for (rowID, text) in batch {
            guard case .object(let document) = try JSONParser.parse(text) else { continue }
            try fillEntries(only, rowID: rowID, document)
        }
        return last
    }

    /// Writes `document`'s entries in `only`'s indexes, keeping any a write already made.
    private func fillEntries(_ only: CollectionLayout, rowID: Int64, _ document: JSONObject) throws {
        let (entries, multikey) = indexEntries(only, document)
        let insert = try db.prepare("INSERT OR IGNORE INTO \(only.indexTable) (path, k, v, rid) VALUES (?1, ?2, ?3, ?4)")
        for path in multikey { try insert.run([.text(path), .int(0), .int(0), .int(0)]) }
        for entry in entries { try insert.run([.text(entry.path), .int(entry.valueClass.rawValue), entry.value, .int(rowID)]) }
        for (path, table) in only.geoTables {
            guard let (x, y) = PathValues.point(in: document, path: path.split(separator: ".").map(String.init)) else { continue }
            try db.prepare("INSERT OR REPLACE INTO \(table) (id, minX, maxX, minY, maxY) VALUES (?1, ?2, ?2, ?3, ?3)")
                .run([.int(rowID), .double(x), .double(y)])
            try db.prepare("INSERT OR REPLACE INTO \(CollectionLayout.pointTable(table)) (rid, x, y) VALUES (?1, ?2, ?3)")
                .run([.int(rowID), .double(x), .double(y)])
        }
    }

    /// Removes index `id`: its entries, sort index or geo tables, and its row.
    func dropIndex(_ layout: CollectionLayout, id: Int64, spec: IndexSpec) throws {
        if spec.kind == .geo {
            let geoTable = "g_\(layout.tableID)_\(id)"
            try db.exec("DROP TABLE IF EXISTS \(geoTable); DROP TABLE IF EXISTS \(CollectionLayout.pointTable(geoTable))")
        } else {
            try db.prepare("DELETE FROM \(layout.indexTable) WHERE path = ?1").run([.text(spec.path)])
            try db.exec("DROP INDEX IF EXISTS \(Catalog.sortIndexName(tableID: layout.tableID, indexID: id))")
        }
        try db.prepare("DELETE FROM _indexes WHERE id = ?1").run([.int(id)])
        logger.info("dropped index", metadata: ["collection": "\(layout.name)", "index": "\(spec)"])
    }
}
