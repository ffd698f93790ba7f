import Logging

/// The PostgreSQL engine's schema, as a versioned list recorded in
/// `_migrations` (as `Migrations` does for SQLite). Applied by one node at a
/// time: the whole run holds a transaction-level advisory lock, so nodes
/// starting together wait for each other instead of racing.
///
/// Tables: `_collections` (name → id), one `c_<id>` per collection
/// (`PostgresCatalog`), the change feed `_changes` with its sequence, and
/// `_meta` (feed epoch and horizon).
public enum PostgresMigrations {
    /// The advisory-lock key migrations hold (any fixed number; "Roost" + 1).
    static let lockKey: Int64 = 0x526F_6F73_7401

    /// Version and SQL, in order. Never edit one that shipped; append.
    static let all: [(version: Int, sql: String)] = [
        (1, """
            CREATE TABLE _collections (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                name text NOT NULL UNIQUE
            );
            CREATE SEQUENCE _changes_seq;
            CREATE TABLE _changes (
                seq bigint PRIMARY KEY DEFAULT nextval('_changes_seq'),
                coll text NOT NULL,
                id text NOT NULL,
                op integer NOT NULL,
                at bigint NOT NULL,
                prev_doc text
            );
            ALTER SEQUENCE _changes_seq OWNED BY _changes.seq;
            CREATE INDEX _changes_coll ON _changes (coll, seq);
            CREATE TABLE _meta (key text PRIMARY KEY, value text NOT NULL);
            INSERT INTO _meta (key, value) VALUES ('epoch', left(md5(random()::text || clock_timestamp()::text), 16)), ('feed_horizon', '0');
            """),
        // Thumbnail jobs, claimed by one node at a time under a lease (`PostgresFileJobs`).
        (2, """
            CREATE TABLE _file_jobs (
                file_id text COLLATE "C" PRIMARY KEY,
                content_type text NOT NULL,
                created_at text NOT NULL,
                claimed_by text,
                lease_until timestamptz
            );
            CREATE INDEX _file_jobs_lease ON _file_jobs (lease_until NULLS FIRST);
            """),
        accounts,
        files,
        feed,
        indexes,
        body,
        keyIndexes,
        accountEmails,
        identities,
        anonymous,
        twoFactor,
        push,
        // `GET /files`: a user's own uploads, newest first, without scanning every file.
        (14, "CREATE INDEX _files_creator ON _files ((doc->'_acl'->>'creator'), rid)"),
        roles,
        PostgresCollectionSettingsSQL.migration,
        // What an account deletion leaves for after its answer, and Apple refresh tokens.
        PostgresAccountJobsSQL.migration,
        fasterFloat8,
        geoPoints,
        pushPartialIndexes,
    ]

    /// Applies every migration the database has not recorded.
    public static func apply(on db: PGConnection, logger: Logger) throws {
        try db.transaction {
            try db.run("SELECT pg_advisory_xact_lock($1::bigint)", [.int(lockKey)])
            try db.execute("CREATE TABLE IF NOT EXISTS _migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            let done = Set(try db.query("SELECT version FROM _migrations") { Int($0.int(0) ?? -1) })
            var applied: [Int] = []
            for migration in all where !done.contains(migration.version) {
                try db.execute(migration.sql)
                try db.run("INSERT INTO _migrations (version) VALUES ($1::integer)", [.int(Int64(migration.version))])
                logger.debug("applied PostgreSQL migration \(migration.version)")
                applied.append(migration.version)
            }
            if let first = applied.first, let last = applied.last {
                logger.info("PostgreSQL schema migrations applied: \(applied.count) (versions \(first) to \(last))")
            }
        }
    }

    /// The newest version this build knows.
    public static var latest: Int { all.last?.version ?? 0 }
}
