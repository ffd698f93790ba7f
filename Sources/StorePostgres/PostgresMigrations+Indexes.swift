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
