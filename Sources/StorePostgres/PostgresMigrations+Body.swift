/// Migration 7: each collection's document as `jsonb` beside its `json`
/// (`PostgresCatalog.bodyColumnSQL`), and declared indexes on it.
///
/// Adds the generated `body` column to every collection table and to
/// `_files` (whose rows a delta sync filters; a rewrite of each table,
/// under its lock), then drops every declared index, built on
/// the `json` expressions no query writes any more, and forgets them in
/// `_indexes`: the start-up's `applyIndexes` finds them undeclared there
/// and builds them again on `body`. It runs inside the migrations'
/// transaction and advisory lock, so nodes starting together apply it
/// once. Every node must run this build or a later one: an older node
/// would create collection tables without `body`.
extension PostgresMigrations {
    static let body = (version: 7, sql: """
        DO $$
        DECLARE r record;
        BEGIN
            ALTER TABLE _files ADD COLUMN IF NOT EXISTS \(PostgresCatalog.bodyColumnSQL);
            FOR r IN SELECT id FROM _collections LOOP
                EXECUTE format('ALTER TABLE IF EXISTS c_%s ADD COLUMN IF NOT EXISTS \(PostgresCatalog.bodyColumnSQL)', r.id);
            END LOOP;
            FOR r IN SELECT collection_id AS t, id, kind FROM _indexes LOOP
                IF r.kind = 'geo' THEN
                    EXECUTE format('DROP INDEX IF EXISTS c_%s_g%s, c_%s_g%s_far', r.t, r.id, r.t, r.id);
                ELSE
                    EXECUTE format('DROP INDEX IF EXISTS c_%s_x%s_s, c_%s_x%s_n, c_%s_x%s_t', r.t, r.id, r.t, r.id, r.t, r.id);
                END IF;
            END LOOP;
            DELETE FROM _indexes;
        END $$;
        """)
}
