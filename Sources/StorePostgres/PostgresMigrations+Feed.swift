extension PostgresMigrations {
    /// Migration 5: the key that seals feed cursors (`CursorSeal`), kept in
    /// `_meta` as on SQLite and shared by every node, so a cursor sealed on
    /// one node opens on any other. 32 random bytes as hex: the SHA-256 of
    /// two `gen_random_uuid()` values (PostgreSQL's strong random source).
    /// And an index on an entity's changes in order, so the states of the
    /// entities of a delta page or a live batch are one index probe each,
    /// whatever the planner guesses of the feed's size.
    static let feed = (version: 5, sql: """
        CREATE INDEX _changes_entity ON _changes (coll, id, seq);
        INSERT INTO _meta (key, value)
        VALUES ('cursor_key', encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'))
        ON CONFLICT (key) DO NOTHING;
        """)
}
