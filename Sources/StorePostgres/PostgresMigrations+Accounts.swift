/// Migration 3: accounts, sessions, the log-in throttle, push devices,
/// webhook endpoints and the webhook outbox: SQLite's tables of the same
/// names (its migrations 2, 4 and 7), shared by every node.
///
/// - Ids, keys and names are `text COLLATE "C"` (SQLite's BINARY).
/// - A username is unique as SQLite's `COLLATE NOCASE` makes it: ASCII
///   letters folded, nothing else; `lower()` under the "C" collation folds
///   exactly those (`_credentials_username`).
/// - Deliveries carry `claimed_by` / `lease_until`: a node claims what it
///   sends (`PostgresDocumentReader+Outbox`).
extension PostgresMigrations {
    static let accounts = (version: 3, sql: """
        CREATE TABLE _credentials (
            user_id text COLLATE "C" PRIMARY KEY,
            username text COLLATE "C" NOT NULL,
            password_hash text NOT NULL,
            updated_at text NOT NULL
        );
        CREATE UNIQUE INDEX _credentials_username ON _credentials (lower(username));
        CREATE TABLE _sessions (
            token_hash text COLLATE "C" PRIMARY KEY,
            user_id text COLLATE "C" NOT NULL,
            created_at bigint NOT NULL,
            last_seen bigint NOT NULL,
            expires_at bigint NOT NULL
        );
        CREATE INDEX _sessions_user ON _sessions (user_id);
        CREATE INDEX _sessions_expiry ON _sessions (expires_at);
        CREATE TABLE _login_failures (
            key text COLLATE "C" PRIMARY KEY,
            failures bigint NOT NULL,
            window_start bigint NOT NULL,
            blocked_until bigint NOT NULL
        );
        CREATE INDEX _login_failures_window ON _login_failures (window_start);
        CREATE TABLE _login_known (
            user_id text COLLATE "C" NOT NULL,
            address text COLLATE "C" NOT NULL,
            last_success bigint NOT NULL,
            PRIMARY KEY (user_id, address)
        );
        CREATE INDEX _login_known_age ON _login_known (last_success);
        CREATE TABLE _push_devices (
            token text COLLATE "C" PRIMARY KEY,
            user_id text COLLATE "C" NOT NULL,
            platform text COLLATE "C" NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
            created_at text COLLATE "C" NOT NULL,
            updated_at text NOT NULL
        );
        CREATE INDEX _push_devices_user ON _push_devices (user_id);
        CREATE TABLE _webhook_endpoints (
            name text COLLATE "C" PRIMARY KEY,
            url text NOT NULL,
            secret text NOT NULL,
            events text NOT NULL,
            format text NOT NULL CHECK (format IN ('standard', 'gorush')),
            source text NOT NULL CHECK (source IN ('config', 'admin')),
            disabled_at text,
            disabled_reason text,
            created_at text NOT NULL
        );
        CREATE TABLE _outbox (
            id text COLLATE "C" PRIMARY KEY,
            type text NOT NULL,
            created_at text NOT NULL,
            data text NOT NULL
        );
        CREATE TABLE _webhook_deliveries (
            rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            event_id text COLLATE "C" NOT NULL REFERENCES _outbox (id),
            endpoint text COLLATE "C" NOT NULL,
            status text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at bigint NOT NULL,
            last_status integer,
            last_error text,
            created_at text NOT NULL,
            updated_at text NOT NULL,
            claimed_by text,
            lease_until timestamptz,
            UNIQUE (event_id, endpoint)
        );
        CREATE INDEX _webhook_deliveries_due ON _webhook_deliveries (status, next_attempt_at);
        CREATE TABLE _webhook_attempts (
            delivery_rid bigint NOT NULL REFERENCES _webhook_deliveries (rid),
            attempt integer NOT NULL,
            at text NOT NULL,
            status integer,
            error text,
            duration_ms bigint NOT NULL,
            PRIMARY KEY (delivery_rid, attempt)
        );
        """)
}
