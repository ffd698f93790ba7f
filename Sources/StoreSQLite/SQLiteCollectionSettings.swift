import Store

/// The settings of collections set up at run time on SQLite
/// (`CollectionSettingsRecord`), shared by the reader and the writer.
enum CollectionSettingsSQL {
    static let migration = """
        CREATE TABLE _collection_settings (
            name TEXT PRIMARY KEY,
            settings TEXT,
            version INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        );
        ALTER TABLE _indexes ADD COLUMN state TEXT NOT NULL DEFAULT 'ready';
        ALTER TABLE _indexes ADD COLUMN progress INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _indexes ADD COLUMN until_rid INTEGER NOT NULL DEFAULT 0;
        """

    static func all(_ db: SQLiteConnection) throws -> [CollectionSettingsRecord] {
        try db.prepare("SELECT name, settings, version, updated_at FROM _collection_settings ORDER BY name").rows {
            CollectionSettingsRecord(name: $0.text(0), settings: $0.isNull(1) ? nil : $0.text(1), version: $0.int(2), updatedAt: $0.text(3))
        }
    }

    static func version(_ db: SQLiteConnection) throws -> Int64 {
        try db.prepare("SELECT coalesce(max(version), 0) FROM _collection_settings").firstRow { $0.int(0) } ?? 0
    }
}

extension DocumentReader {
    public func collectionSettings() throws -> [CollectionSettingsRecord] { try CollectionSettingsSQL.all(db) }

    public func collectionSettingsVersion() throws -> Int64 { try CollectionSettingsSQL.version(db) }

    public func documentPage(in collection: String, after: String?, limit: Int) throws -> [(id: String, text: String)] {
        guard let layout = try catalog.layout(collection) else { return [] }
        return try db.prepare("SELECT id, doc FROM \(layout.table) WHERE id > ?1 ORDER BY id LIMIT ?2")
            .rows([.text(after ?? ""), .int(Int64(limit))]) { (id: $0.text(0), text: $0.text(1)) }
    }

    /// The rows the user may read by their `_acl` (the creator among them): a range of the acl table's key.
    public func creatorCandidates(in collection: String, userID: String, afterRow: Int64, limit: Int) throws -> [(rid: Int64, id: String, text: String)] {
        guard let layout = try catalog.layout(collection) else { return [] }
        return try db.prepare("""
            SELECT c.rid, c.id, c.doc FROM \(layout.aclTable) a JOIN \(layout.table) c ON c.rid = a.rid
            WHERE a.uid = ?1 AND a.rid > ?2 ORDER BY a.rid LIMIT ?3
            """).rows([.text(userID), .int(afterRow), .int(Int64(limit))]) { (rid: $0.int(0), id: $0.text(1), text: $0.text(2)) }
    }
}

extension DocumentWriter {
    public func saveCollectionSettings(_ name: String, settings: String?, ifVersion: Int64?) throws -> CollectionSettingsRecord {
        // A dropped collection's record counts as none (version 0).
        let current = try db.prepare("SELECT CASE WHEN settings IS NULL THEN 0 ELSE version END FROM _collection_settings WHERE name = ?1")
            .firstRow([.text(name)]) { $0.int(0) } ?? 0
        if let ifVersion, ifVersion != current {
            throw StoreError.conflict("The settings of \(name) changed meanwhile (version \(current), not \(ifVersion)): read them again.")
        }
        let record = CollectionSettingsRecord(name: name, settings: settings, version: try CollectionSettingsSQL.version(db) + 1,
                                              updatedAt: Timestamp.now())
        try db.prepare("""
            INSERT INTO _collection_settings (name, settings, version, updated_at) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, version = excluded.version, updated_at = excluded.updated_at
            """).run([.text(name), settings.map { .text($0) } ?? .null, .int(record.version), .text(record.updatedAt)])
        return record
    }
}
