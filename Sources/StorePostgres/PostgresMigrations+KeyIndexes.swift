/// Migration 8: declared value indexes whose sort key is never NULL
/// (`PostgresDocumentReader.orderColumns`, issue #42), so a keyset page,
/// an equality and a range are conditions on the index itself.
///
/// Drops only each declared value index's sort-key index (`_s`, built with
/// NULLs, which no statement writes any more) and its extended statistics;
/// the `(type, number)` and `(type, string)` indexes (`_n`, `_t`) and the
/// `_indexes` rows stay. The start-up's `applyIndexes` then builds each
/// missing `_s` again (`CREATE INDEX`, which blocks writes to that
/// collection while it builds: see docs/POSTGRES-LISTS.md, "Upgrading").
/// `DROP INDEX` takes an ACCESS EXCLUSIVE lock on the table for an instant;
/// `lock_timeout` (10 s) makes a start-up that cannot get it fail, and be
/// retried, instead of queueing every read and write behind it. It runs
/// inside the migrations' transaction and advisory lock, so nodes starting
/// together apply it once; every node must run this build or a later one
/// (an older node's lists would no longer match the rebuilt indexes:
/// slower, not wrong).
extension PostgresMigrations {
    static let keyIndexes = (version: 8, sql: """
        DO $$
        DECLARE r record;
        BEGIN
            PERFORM set_config('lock_timeout', '10s', true);
            FOR r IN SELECT collection_id AS t, id FROM _indexes WHERE kind <> 'geo' LOOP
                EXECUTE format('DROP INDEX IF EXISTS c_%s_x%s_s', r.t, r.id);
                EXECUTE format('DROP STATISTICS IF EXISTS c_%s_x%s_st', r.t, r.id);
            END LOOP;
        END $$;
        """)
}
