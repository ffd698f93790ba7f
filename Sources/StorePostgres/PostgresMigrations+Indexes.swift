/// Migration 6: declared indexes and geo (`PostgresDocumentWriter+Indexes`,
/// `PostgresDialect+Geo`).
///
/// - `_indexes`: the indexes declared per collection; each row's id names
///   its PostgreSQL indexes (`c_<table>_x<id>_…`, `c_<table>_g<id>`).
/// - `roost_float8(text)`: a JSON number's text as the double SQLite reads,
///   without PostgreSQL's errors: the parser refused numbers beyond a
///   double's range, but one too small for a double (`1e-400`) is zero on
///   SQLite and an error for `float8` (and for `numeric` below 1e-16383; a regex repeats at most 255 times).
///   Immutable, so geo indexes may store it.
extension PostgresMigrations {
    static let indexes = (version: 6, sql: """
        CREATE TABLE _indexes (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            collection_id bigint NOT NULL,
            path text COLLATE "C" NOT NULL,
            kind text NOT NULL,
            UNIQUE (collection_id, path, kind)
        );
        CREATE FUNCTION roost_float8(t text) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT CASE
                WHEN t !~ '[eE]-|\\.0{250}' THEN t::float8
                WHEN t ~ '[eE]-0*[0-9]{5}' THEN 0::float8
                WHEN abs(t::numeric) < 2.4703282292062328e-324 THEN 0::float8
                ELSE t::numeric::float8
            END
        $$;
        """)
}

/// Migration 18: `roost_float8` (migration 6) with the same answers, faster.
///
/// Every geo test reads each coordinate through it (`PostgresDialect.geoNumber`),
/// and its first test, the regex `[eE]-|\.0{250}`, cost about 5 µs a call
/// (the 250-state pattern is matched afresh each time). A number's text
/// shorter than 251 bytes holds no `.` followed by 250 zeros, so where it
/// also holds no `e-` or `E-` the regex is false and the answer is
/// `t::float8`, as before: the new first branch is a case of the old
/// first branch, and every other text meets the old tests unchanged. The
/// function keeps its OID, so the geo indexes that store it stay valid (their
/// contents are the same values).
extension PostgresMigrations {
    static let fasterFloat8 = (version: 18, sql: """
        CREATE OR REPLACE FUNCTION roost_float8(t text) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT CASE
                WHEN octet_length(t) < 251 AND strpos(t, 'e-') = 0 AND strpos(t, 'E-') = 0 THEN t::float8
                WHEN t !~ '[eE]-|\\.0{250}' THEN t::float8
                WHEN t ~ '[eE]-0*[0-9]{5}' THEN 0::float8
                WHEN abs(t::numeric) < 2.4703282292062328e-324 THEN 0::float8
                ELSE t::numeric::float8
            END
        $$;
        """)
}

/// Migration 19: whether a geo index's points table (`PostgresGeoPoints`) is
/// filled. Existing geo indexes start without one; the index machinery
/// builds and fills it (`applyIndexes` at start-up, the index builder for a
/// collection set up at run time) before readers use it.
extension PostgresMigrations {
    static let geoPoints = (version: 19, sql: """
        ALTER TABLE _indexes ADD COLUMN points boolean NOT NULL DEFAULT FALSE;
        """)
}
