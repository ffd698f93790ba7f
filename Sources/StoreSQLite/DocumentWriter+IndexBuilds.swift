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
                // Wanted again before it went: every write kept it meanwhile (its sort index too, if it had one).
                let sorted = try index.spec.kind == .geo || hasSortIndex(layout, id: index.id)
                try setState.run([.int(index.id), .text(IndexBuildProgress.State.ready.rawValue), .int(sorted ? 0 : Self.sortDeferred)])
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
                // SQLite builds an index over the table in one statement, holding every write meanwhile
                // (about 2 µs a document): past `sortIndexMaxRows` the sort order waits for the next start.
                var marker: Int64 = 0
                if index.spec.kind == .value {
                    if total <= Self.sortIndexMaxRows {
                        try db.exec(Catalog.sortIndexSQL(tableID: layout.tableID, indexID: index.id, path: index.spec.path))
                    } else {
                        marker = Self.sortDeferred
                        logger.notice("index ready for filters; its sort order is built at the next start", metadata: [
                            "collection": "\(collection)", "index": "\(index.spec)", "documents": "\(total)"])
                    }
                }
                try setState.run([.int(index.id), .text(IndexBuildProgress.State.ready.rawValue), .int(marker)])
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
                                         rowsDone: r.text(2) == "building" ? r.int(3) : 0, rowsTotal: r.text(2) == "building" ? total : 0,
                                         sortDeferred: r.text(2) == "ready" && r.int(3) == Self.sortDeferred)
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

    /// Most documents a collection may hold for a sort index to be built while Roost runs (≈ 200 ms).
    static let sortIndexMaxRows: Int64 = 100_000
    /// `_indexes.progress` of a ready value index whose sort index waits for the next start.
    static let sortDeferred: Int64 = -1

    /// Builds the sort indexes left for the next start (`sortIndexMaxRows`), before serving.
    func buildDeferredSortIndexes() throws {
        let pending = try db.prepare("SELECT i.id, i.collection_id, i.path, c.name FROM _indexes i JOIN _collections c ON c.id = i.collection_id "
                                     + "WHERE i.kind = 'value' AND i.state = 'ready' AND i.progress = ?1")
            .rows([.int(Self.sortDeferred)]) { ($0.int(0), $0.int(1), $0.text(2), $0.text(3)) }
        for (id, table, path, name) in pending {
            try db.transaction {
                try db.exec(Catalog.sortIndexSQL(tableID: table, indexID: id, path: path))
                try db.prepare("UPDATE _indexes SET progress = 0 WHERE id = ?1").run([.int(id)])
            }
            logger.info("built a deferred sort index", metadata: ["collection": "\(name)", "index": "\(path)"])
        }
    }

    private func hasSortIndex(_ layout: CollectionLayout, id: Int64) throws -> Bool {
        try db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")
            .firstRow([.text(Catalog.sortIndexName(tableID: layout.tableID, indexID: id))]) { _ in true } ?? false
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
