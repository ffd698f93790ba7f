/// Migration 9: direct push (APNs, FCM), as SQLite's migration 12
/// (`PushOutbox.migration`): device columns, the push outbox with claims
/// (`claimed_by`, `lease_until`: one node sends each push) and its attempts.
extension PostgresMigrations {
    static let push = (version: 13, sql: """
        ALTER TABLE _push_devices ADD COLUMN environment text;
        ALTER TABLE _push_devices ADD COLUMN sync boolean NOT NULL DEFAULT false;
        ALTER TABLE _push_devices ADD COLUMN seen_at text;
        ALTER TABLE _push_devices ADD COLUMN deliveries bigint NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN failures bigint NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN last_error text;
        ALTER TABLE _push_devices ADD COLUMN last_push_at text;
        CREATE TABLE _push_deliveries (
            rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            token text COLLATE "C" NOT NULL,
            user_id text COLLATE "C" NOT NULL,
            platform text NOT NULL,
            kind text NOT NULL CHECK (kind IN ('alert', 'background')),
            payload text NOT NULL,
            collapse_id text,
            status text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'dropped')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at bigint NOT NULL,
            last_status integer,
            last_error text,
            created_at text NOT NULL,
            updated_at text NOT NULL,
            claimed_by text,
            lease_until timestamptz
        );
        CREATE INDEX _push_deliveries_due ON _push_deliveries (status, next_attempt_at);
        CREATE INDEX _push_deliveries_token ON _push_deliveries (token, status);
        CREATE INDEX _push_deliveries_finished ON _push_deliveries (kind, status, updated_at);
        CREATE TABLE _push_attempts (
            delivery_rid bigint NOT NULL,
            attempt integer NOT NULL,
            at text NOT NULL,
            status integer,
            error text,
            PRIMARY KEY (delivery_rid, attempt)
        );
        """)

    /// The outbox's indexes hold only the rows each query reads (due: pending rows; finished:
    /// delivered, dead and dropped ones); the token index no longer carries the status. A
    /// delivered push leaves the due index instead of getting a new entry in it (as SQLite's
    /// migration 23).
    static let pushPartialIndexes = (version: 20, sql: """
        DROP INDEX _push_deliveries_due;
        CREATE INDEX _push_deliveries_due ON _push_deliveries (next_attempt_at, rid) WHERE status = 'pending';
        DROP INDEX _push_deliveries_finished;
        CREATE INDEX _push_deliveries_finished ON _push_deliveries (kind, updated_at) WHERE status IN ('delivered', 'dead', 'dropped');
        DROP INDEX _push_deliveries_token;
        CREATE INDEX _push_deliveries_token ON _push_deliveries (token);
        """)
}
