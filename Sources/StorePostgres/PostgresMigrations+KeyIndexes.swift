/// Migration 8: declared value indexes whose sort key is never NULL
/// (`PostgresDocumentReader.orderColumns`, issue #42), so a keyset page,
/// an equality and a range are conditions on the index itself.
///
/// Drops every declared value index (built on the sort key with NULLs,
/// which no statement writes any more) and forgets it in `_indexes`: the
/// start-up's `applyIndexes` builds it again. Geo indexes stay. It runs
/// inside the migrations' transaction and advisory lock, so nodes starting
/// together apply it once; every node must run this build or a later one
/// (an older node's lists would no longer match the rebuilt indexes:
/// slower, not wrong).
extension PostgresMigrations {
    static let keyIndexes = (version: 8, sql: """
        DO $$
        DECLARE r record;
        BEGIN
            FOR r IN SELECT collection_id AS t, id FROM _indexes WHERE kind <> 'geo' LOOP
                EXECUTE format('DROP INDEX IF EXISTS c_%s_x%s_s, c_%s_x%s_n, c_%s_x%s_t', r.t, r.id, r.t, r.id, r.t, r.id);
                EXECUTE format('DROP STATISTICS IF EXISTS c_%s_x%s_st', r.t, r.id);
            END LOOP;
            DELETE FROM _indexes WHERE kind <> 'geo';
        END $$;
        """)
}
