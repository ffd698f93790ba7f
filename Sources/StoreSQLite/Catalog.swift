import Store

/// Reads and creates collection layouts. One per connection; it caches what
/// it has seen. An index built or dropped while Roost runs bumps
/// `CatalogGeneration`, which empties every connection's cache.
///
/// An index is `ready` (reads may use it), `building` (filled in steps by
/// `buildIndexesStep`; writes keep it up to date, reads do not use it yet)
/// or `dropping` (reads no longer use it; writes still keep it until no
/// read that began before can be running).
final class Catalog {
    private let db: SQLiteConnection
    private var cache: [String: CollectionLayout] = [:]
    private var generation = CatalogGeneration.current

    init(db: SQLiteConnection) { self.db = db }

    /// The layout of `name`, or nil when nothing was ever written to it.
    func layout(_ name: String) throws -> CollectionLayout? {
        let now = CatalogGeneration.current
        if now != generation { cache.removeAll(); generation = now }
        if let cached = cache[name] { return cached }
        guard let id = try db.prepare("SELECT id FROM _collections WHERE name = ?1").firstRow([.text(name)], { $0.int(0) }) else {
            return nil
        }
        let indexes = try db.prepare("SELECT id, path, kind, state FROM _indexes WHERE collection_id = ?1 ORDER BY id")
            .rows([.int(id)]) { ($0.int(0), $0.text(1), $0.text(2), $0.text(3)) }
        var values: Set<String> = [], maintained: Set<String> = []
        var geo: [String: String] = [:], maintainedGeo: [String: String] = [:]
        for (indexID, path, kind, state) in indexes {
            if kind == "geo" {
                maintainedGeo[path] = "g_\(id)_\(indexID)"
                if state == "ready" { geo[path] = "g_\(id)_\(indexID)" }
            } else {
                maintained.insert(path)
                if state == "ready" { values.insert(path) }
            }
        }
        let layout = CollectionLayout(name: name, tableID: id, indexedPaths: values, geoTables: geo,
                                      maintainedPaths: maintained, maintainedGeoTables: maintainedGeo)
        cache[name] = layout
        return layout
    }

    func forget(_ name: String) { cache[name] = nil }
    func forgetAll() { cache.removeAll() }

    /// The layout of `name`, creating its tables first if needed. Writer only.
    func ensure(_ name: String) throws -> CollectionLayout {
        if let existing = try layout(name) { return existing }
        try db.prepare("INSERT INTO _collections (name, created_at) VALUES (?1, ?2)").run([.text(name), .text(Timestamp.now())])
        let id = db.lastInsertRowID
        try db.exec("""
            CREATE TABLE c_\(id) (
                rid INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                doc TEXT NOT NULL,
                rs INTEGER,
                rb INTEGER
            );
            CREATE INDEX c_\(id)_created ON c_\(id)(created_at);
            \(Self.updatedIndexSQL(tableID: id));
            \(Self.rowIndexSQL(tableID: id));
            CREATE TABLE x_\(id) (path TEXT NOT NULL, k INTEGER NOT NULL, v, rid INTEGER NOT NULL,
                                  PRIMARY KEY (path, k, v, rid)) WITHOUT ROWID;
            \(Self.aclTableSQL(tableID: id));
            """)
        forget(name)
        guard let created = try layout(name) else { throw SQLiteError(code: 1, message: "collection \(name) vanished") }
        return created
    }

    /// The table of who may read each row (`CollectionLayout.aclTable`).
    static func aclTableSQL(tableID: Int64) -> String {
        "CREATE TABLE IF NOT EXISTS a_\(tableID) (uid TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (uid, rid)) WITHOUT ROWID"
    }

    /// The index that orders a collection's rows by `_updatedAt`.
    static func updatedIndexSQL(tableID: Int64) -> String {
        "CREATE INDEX IF NOT EXISTS c_\(tableID)_updated ON c_\(tableID)(updated_at)"
    }

    /// The row ids alone, in row order: a page far into the default order
    /// (`skip`) steps over these small entries instead of the documents
    /// (`ListPlan.Strategy.rowPage`).
    static func rowIndexSQL(tableID: Int64) -> String {
        "CREATE INDEX IF NOT EXISTS c_\(tableID)_rid ON c_\(tableID)(rid)"
    }

    /// The index that orders a collection's rows by the value index `path`,
    /// in MongoDB's order across types (`SortKey.indexExpressions`), so a
    /// sort or a range on it reads only the page.
    static func sortIndexSQL(tableID: Int64, indexID: Int64, path: String) -> String {
        let (bracket, value) = SortKey.indexExpressions(path, document: "doc")
        return "CREATE INDEX IF NOT EXISTS \(sortIndexName(tableID: tableID, indexID: indexID)) ON c_\(tableID)(\(bracket), \(value))"
    }

    static func sortIndexName(tableID: Int64, indexID: Int64) -> String { "c_\(tableID)_s_\(indexID)" }

    /// The points table beside a geo index (`CollectionLayout.pointTable`).
    static func pointTableSQL(_ geoTable: String) -> String {
        "CREATE TABLE IF NOT EXISTS \(CollectionLayout.pointTable(geoTable)) (rid INTEGER PRIMARY KEY, x REAL NOT NULL, y REAL NOT NULL)"
    }
}
