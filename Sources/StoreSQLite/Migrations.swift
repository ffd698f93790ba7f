import JSON
import Logging
import Store

/// One schema change: SQL, and for changes to the per-collection tables
/// (whose names are only known at run time) a step in code.
public struct Migration: Sendable {
    public let version: Int
    let sql: String
    let code: (@Sendable (SQLiteConnection) throws -> Void)?

    init(_ version: Int, _ sql: String, code: (@Sendable (SQLiteConnection) throws -> Void)? = nil) {
        self.version = version
        self.sql = sql
        self.code = code
    }
}

/// Versioned schema migrations, applied in order at start-up inside one
/// transaction each. A migration is never edited once released; add a new one.
public enum Migrations {
    public static let all: [Migration] = [
        Migration(1, """
            CREATE TABLE _collections (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                created_at TEXT NOT NULL
            );
            CREATE TABLE _indexes (
                id INTEGER PRIMARY KEY,
                collection_id INTEGER NOT NULL REFERENCES _collections(id),
                path TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('value', 'geo')),
                UNIQUE (collection_id, path, kind)
            );
            """),
        Migration(2, """
            CREATE TABLE _credentials (
                user_id TEXT PRIMARY KEY,
                username TEXT NOT NULL UNIQUE COLLATE NOCASE,
                password_hash TEXT NOT NULL,
                updated_at TEXT NOT NULL
            );
            CREATE TABLE _sessions (
                token_hash TEXT PRIMARY KEY,
                user_id TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_seen INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX _sessions_user ON _sessions(user_id);
            CREATE TABLE _login_failures (
                key TEXT PRIMARY KEY,
                failures INTEGER NOT NULL,
                window_start INTEGER NOT NULL,
                blocked_until INTEGER NOT NULL
            );
            """),
        Migration(3, """
            CREATE TABLE _files (
                rid INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                created_at TEXT NOT NULL,
                doc TEXT NOT NULL
            );
            CREATE TABLE _file_jobs (
                file_id TEXT PRIMARY KEY,
                content_type TEXT NOT NULL,
                created_at TEXT NOT NULL
            );
            """),
        Migration(4, """
            CREATE TABLE _push_devices (
                token TEXT PRIMARY KEY,
                user_id TEXT NOT NULL,
                platform TEXT NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL
            );
            CREATE INDEX _push_devices_user ON _push_devices(user_id);
            CREATE TABLE _webhook_endpoints (
                name TEXT PRIMARY KEY,
                url TEXT NOT NULL,
                secret TEXT NOT NULL,
                events TEXT NOT NULL,
                format TEXT NOT NULL CHECK (format IN ('standard', 'gorush')),
                source TEXT NOT NULL CHECK (source IN ('config', 'admin')),
                disabled_at TEXT,
                disabled_reason TEXT,
                created_at TEXT NOT NULL
            );
            CREATE TABLE _outbox (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                created_at TEXT NOT NULL,
                data TEXT NOT NULL
            );
            CREATE TABLE _webhook_deliveries (
                rid INTEGER PRIMARY KEY,
                event_id TEXT NOT NULL REFERENCES _outbox(id),
                endpoint TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NOT NULL,
                last_status INTEGER,
                last_error TEXT,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                UNIQUE (event_id, endpoint)
            );
            CREATE INDEX _webhook_deliveries_due ON _webhook_deliveries(status, next_attempt_at);
            CREATE TABLE _webhook_attempts (
                delivery_rid INTEGER NOT NULL REFERENCES _webhook_deliveries(rid),
                attempt INTEGER NOT NULL,
                at TEXT NOT NULL,
                status INTEGER,
                error TEXT,
                duration_ms INTEGER NOT NULL,
                PRIMARY KEY (delivery_rid, attempt)
            );
            """),
        // Index entries are deleted by their full key, recomputed from the
        // stored document: the second B-tree by row id only slowed writes.
        Migration(5, "", code: { db in
            let ids = try db.prepare("SELECT id FROM _collections").rows { $0.int(0) }
            for id in ids { try db.exec("DROP INDEX IF EXISTS x_\(id)_rid") }
        }),
        Migration(6, ChangeFeed.migration),
        // The log-in throttle: addresses each account has logged in from (they
        // are spared the per-address and per-account limits), and an index to
        // prune stale counters.
        Migration(7, """
            CREATE TABLE _login_known (
                user_id TEXT NOT NULL,
                address TEXT NOT NULL,
                last_success INTEGER NOT NULL,
                PRIMARY KEY (user_id, address)
            );
            CREATE INDEX _login_known_age ON _login_known(last_success);
            CREATE INDEX _login_failures_window ON _login_failures(window_start);
            """),
        // Sorted pages in O(page): every collection's rows by `_updatedAt`,
        // and by each declared value index in MongoDB's order across types.
        Migration(8, "", code: { db in
            let ids = try db.prepare("SELECT id FROM _collections").rows { $0.int(0) }
            for id in ids { try db.exec(Catalog.updatedIndexSQL(tableID: id)) }
            let indexes = try db.prepare("SELECT collection_id, id, path FROM _indexes WHERE kind = 'value'")
                .rows { ($0.int(0), $0.int(1), $0.text(2)) }
            for (table, index, path) in indexes { try db.exec(Catalog.sortIndexSQL(tableID: table, indexID: index, path: path)) }
        }),
        // Private reads start from the caller's own rows: who may read each row.
        Migration(9, "", code: { db in
            let ids = try db.prepare("SELECT id FROM _collections").rows { $0.int(0) }
            for id in ids {
                try db.exec(Catalog.aclTableSQL(tableID: id))
                let insert = try db.prepare("INSERT OR IGNORE INTO a_\(id) (uid, rid) VALUES (?1, ?2)")
                let rows = try db.prepare("SELECT rid, doc FROM c_\(id)").rows { ($0.int(0), $0.text(1)) }
                for (rid, text) in rows {
                    guard case .object(let document)? = try? JSONParser.parse(text) else { continue }
                    for uid in AccessScope.readers(of: document) { try insert.run([.text(uid), .int(rid)]) }
                }
            }
        }),
        // The feed without AUTOINCREMENT (a `sqlite_sequence` read and write
        // per change), and the key that seals feed cursors.
        Migration(10, "", code: ChangeFeed.sequenceMigration),
        // Unsorted `$geoWithin` pages walk each geo index's points in row
        // order: a narrow `(rid, x, y)` table beside every R*Tree.
        Migration(11, "", code: { db in
            let indexes = try db.prepare("SELECT collection_id, id, path FROM _indexes WHERE kind = 'geo'")
                .rows { ($0.int(0), $0.int(1), $0.text(2)) }
            for (table, index, path) in indexes {
                let geoTable = "g_\(table)_\(index)"
                try db.exec(Catalog.pointTableSQL(geoTable))
                let insert = try db.prepare("INSERT OR REPLACE INTO \(CollectionLayout.pointTable(geoTable)) (rid, x, y) VALUES (?1, ?2, ?3)")
                let steps = path.split(separator: ".").map(String.init)
                // Row by row as the scan meets them: a million documents are never all in memory.
                _ = try db.prepare("SELECT rid, doc FROM c_\(table)").rows { row in
                    guard case .object(let document)? = try? JSONParser.parse(row.text(1)),
                          let (x, y) = PathValues.point(in: document, path: steps) else { return }
                    try insert.run([.int(row.int(0)), .double(x), .double(y)])
                }
            }
        }),
        // Accounts by email (normalised, unique), one-time codes (verification,
        // reset, email change; stored hashed) and the mail outbox.
        Migration(12, """
            ALTER TABLE _credentials ADD COLUMN email TEXT;
            ALTER TABLE _credentials ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
            CREATE UNIQUE INDEX _credentials_email ON _credentials(email);
            CREATE TABLE _account_codes (
                user_id TEXT NOT NULL,
                purpose TEXT NOT NULL,
                email TEXT NOT NULL,
                code_hash TEXT NOT NULL,
                link_hash TEXT NOT NULL UNIQUE,
                expires_at INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (user_id, purpose)
            );
            CREATE TABLE _mail_outbox (
                rid INTEGER PRIMARY KEY,
                recipient TEXT NOT NULL,
                kind TEXT NOT NULL,
                message TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('pending', 'dead')),
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NOT NULL,
                last_error TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE INDEX _mail_outbox_due ON _mail_outbox(status, next_attempt_at);
            """),
        // Sign-in identities (provider, subject) of accounts, and ID tokens
        // already used (a token signs in once).
        Migration(13, """
            CREATE TABLE _identities (
                provider TEXT NOT NULL,
                subject TEXT NOT NULL,
                user_id TEXT NOT NULL,
                email TEXT,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (provider, subject)
            );
            CREATE UNIQUE INDEX _identities_user ON _identities(user_id, provider);
            CREATE TABLE _idtokens_used (
                token_hash TEXT PRIMARY KEY,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX _idtokens_used_expiry ON _idtokens_used(expires_at);
            """),
        // Anonymous (guest) accounts: since when, until they add credentials.
        Migration(14, """
            ALTER TABLE _credentials ADD COLUMN anonymous_since INTEGER;
            CREATE INDEX _credentials_anonymous ON _credentials(anonymous_since) WHERE anonymous_since IS NOT NULL;
            """),
        // Two-factor (TOTP): the secret (base32), whether it is on, the last step
        // used (a code works once) and the recovery codes' hashes (JSON array).
        Migration(15, """
            ALTER TABLE _credentials ADD COLUMN totp_secret TEXT;
            ALTER TABLE _credentials ADD COLUMN totp_enabled INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE _credentials ADD COLUMN totp_last_step INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE _credentials ADD COLUMN totp_recovery TEXT NOT NULL DEFAULT '[]';
            """),
        // Direct push (APNs, FCM): each device's APNs environment, whether it
        // wants silent sync pushes, when its app last registered it, and its
        // delivery counts; the push outbox, one row per device, and its attempts.
        Migration(16, PushOutbox.migration),
        // `GET /files`: a user's own uploads, newest first, without scanning every file.
        Migration(17, "CREATE INDEX _files_creator ON _files(json_extract(doc, '$._acl.creator'), rid)"),
        // Roles and their members (`SQLiteRoles`); a user's roles by user id.
        Migration(18, RoleSQL.migration),
        // Read rules' stamps (`RuleStamp`): which fixed part a row's bits were
        // worked out for, and the bits. NULL until the writer stamps the row.
        Migration(19, "", code: { db in
            let ids = try db.prepare("SELECT id FROM _collections").rows { $0.int(0) }
            for id in ids {
                try db.exec("ALTER TABLE c_\(id) ADD COLUMN rs INTEGER; ALTER TABLE c_\(id) ADD COLUMN rb INTEGER")
            }
        }),
        // Collections set up at run time, and indexes built in the background.
        Migration(20, CollectionSettingsSQL.migration),
        // What an account deletion leaves for after its answer (`_account_jobs`:
        // purging the user's data, revoking an Apple token), and the Apple
        // refresh token kept with its identity.
        Migration(21, AccountJobsSQL.migration),
        // Each collection's row-id index (`Catalog.rowIndexSQL`), for `skip` pages
        // in the default order. Built from the rows in order: about 3 s a million rows.
        Migration(22, "", code: { db in
            let ids = try db.prepare("SELECT id FROM _collections").rows { $0.int(0) }
            for id in ids {
                try db.exec(Catalog.rowIndexSQL(tableID: id))
            }
        }),
        // The push outbox's indexes, partial: an attempt's record rewrites fewer entries.
        Migration(23, PushOutbox.partialIndexes),
    ]

    /// Brings the database at `connection` up to the newest version.
    /// - Returns: the version after migrating.
    @discardableResult
    public static func apply(on connection: SQLiteConnection, logger: Logger) throws -> Int {
        try connection.exec("CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        let current = try connection.prepare("SELECT coalesce(max(version), 0) FROM _migrations").firstRow { $0.int(0) } ?? 0
        var applied: [Int] = []
        for migration in all where migration.version > current {
            try connection.transaction {
                if !migration.sql.isEmpty { try connection.exec(migration.sql) }
                try migration.code?(connection)
                try connection.prepare("INSERT INTO _migrations (version, applied_at) VALUES (?1, ?2)")
                    .run([.int(Int64(migration.version)), .text(Timestamp.now())])
            }
            logger.debug("applied schema migration", metadata: ["version": "\(migration.version)"])
            applied.append(migration.version)
        }
        if let first = applied.first, let last = applied.last {
            logger.info("schema migrations applied: \(applied.count) (versions \(first) to \(last))", metadata: ["version": "\(last)"])
        }
        return all.last?.version ?? 0
    }
}
