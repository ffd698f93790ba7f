import Store

/// The settings of collections set up at run time on PostgreSQL
/// (`CollectionSettingsSQL` on SQLite), shared by every node. Versions come
/// from a sequence, so two nodes saving at once never share one; the row
/// lock of `ifVersion`'s check makes a conditional save see the other's.
enum PostgresCollectionSettingsSQL {
    static let migration = (version: 16, sql: """
        CREATE SEQUENCE _collection_settings_version;
        CREATE TABLE _collection_settings (
            name text COLLATE "C" PRIMARY KEY,
            settings text,
            version bigint NOT NULL,
            updated_at text NOT NULL
        );
        """)

    static func all(_ db: PGConnection) throws -> [CollectionSettingsRecord] {
        try db.query("SELECT name, settings, version, updated_at FROM _collection_settings ORDER BY name") {
            CollectionSettingsRecord(name: $0.text(0) ?? "", settings: $0.text(1), version: $0.int(2) ?? 0, updatedAt: $0.text(3) ?? "")
        }
    }

    static func version(_ db: PGConnection) throws -> Int64 {
        try db.first("SELECT coalesce(max(version), 0) FROM _collection_settings") { $0.int(0) ?? 0 } ?? 0
    }
}

extension PostgresDocumentReader {
    public func collectionSettings() throws -> [CollectionSettingsRecord] { try PostgresCollectionSettingsSQL.all(db) }

    public func collectionSettingsVersion() throws -> Int64 { try PostgresCollectionSettingsSQL.version(db) }

    public func documentPage(in collection: String, after: String?, limit: Int) throws -> [(id: String, text: String)] {
        guard let layout = try catalog.layout(collection) else { return [] }
        return try db.query("SELECT id, doc FROM \(layout.table) WHERE id > $1::text ORDER BY id LIMIT $2::bigint",
                            [.text(after ?? ""), .int(Int64(limit))]) { (id: $0.text(0) ?? "", text: $0.text(1) ?? "") }
    }

    /// The rows whose `_acl.creator` is the user, in row order. No index serves it: PostgreSQL
    /// walks the primary key and tests each row itself (no document leaves the server unless
    /// it is the user's), which keeps writes free of one more index for a rare purge.
    public func creatorCandidates(in collection: String, userID: String, afterRow: Int64, limit: Int) throws -> [(rid: Int64, id: String, text: String)] {
        guard let layout = try catalog.layout(collection) else { return [] }
        return try db.query("""
            SELECT rid, id, doc FROM \(layout.table) WHERE (body->'_acl'->>'creator') = $1::text AND rid > $2::bigint
            ORDER BY rid LIMIT $3::bigint
            """, [.text(userID), .int(afterRow), .int(Int64(limit))]) { (rid: $0.int(0) ?? 0, id: $0.text(1) ?? "", text: $0.text(2) ?? "") }
    }
}

extension PostgresDocumentWriter {
    public func saveCollectionSettings(_ name: String, settings: String?, ifVersion: Int64?) throws -> CollectionSettingsRecord {
        do {
            // A dropped collection's record counts as none (version 0).
            let current = try db.first("SELECT CASE WHEN settings IS NULL THEN 0 ELSE version END FROM _collection_settings WHERE name = $1::text FOR UPDATE",
                                       [.text(name)]) { $0.int(0) ?? 0 } ?? 0
            if let ifVersion, ifVersion != current {
                throw StoreError.conflict("The settings of \(name) changed meanwhile (version \(current), not \(ifVersion)): read them again.")
            }
            let now = Timestamp.now()
            // A first save (`ifVersion` 0) racing another node's: the later insert finds the row and fails.
            let update = "UPDATE SET settings = excluded.settings, version = excluded.version, updated_at = excluded.updated_at"
            let onConflict = ifVersion == 0 ? update + " WHERE _collection_settings.settings IS NULL" : update
            guard let version = try db.first("""
                INSERT INTO _collection_settings (name, settings, version, updated_at)
                VALUES ($1::text, $2::text, nextval('_collection_settings_version'), $3::text)
                ON CONFLICT (name) DO \(onConflict) RETURNING version
                """, [.text(name), settings.map { .text($0) } ?? .null, .text(now)], { $0.int(0) ?? 0 }) else {
                throw StoreError.conflict("The collection \(name) was set up meanwhile: read its settings again.")
            }
            return CollectionSettingsRecord(name: name, settings: settings, version: version, updatedAt: now)
        } catch let error as StoreError {
            throw error
        } catch {
            throw Self.wrap(error)
        }
    }
}
