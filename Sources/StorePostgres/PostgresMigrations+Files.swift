extension PostgresMigrations {
    /// Migration 4: file metadata rows (`_files`, as SQLite's: the metadata
    /// document with its `_acl`, guarded by the same access SQL) and the
    /// reference side tables (`_refs`, keyed target first, and `_ref_fields`,
    /// the declarations the rows were built for). Ids and keys compare
    /// bytewise (`COLLATE "C"`), as SQLite's BINARY does.
    static let files = (version: 4, sql: """
        CREATE TABLE _files (
            rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text COLLATE "C" NOT NULL UNIQUE,
            created_at text COLLATE "C" NOT NULL,
            doc json NOT NULL
        );
        CREATE TABLE _refs (
            to_coll text COLLATE "C" NOT NULL,
            to_id text COLLATE "C" NOT NULL,
            from_coll text COLLATE "C" NOT NULL,
            field text COLLATE "C" NOT NULL,
            from_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (to_coll, to_id, from_coll, field, from_id)
        );
        CREATE TABLE _ref_fields (
            from_coll text COLLATE "C" NOT NULL,
            field text COLLATE "C" NOT NULL,
            to_coll text COLLATE "C" NOT NULL,
            PRIMARY KEY (from_coll, field)
        );
        """)
}
