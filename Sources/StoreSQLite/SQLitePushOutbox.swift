import Store

extension PushOutbox {
    /// SQLite's migration 23: the outbox's indexes hold only the rows each query reads
    /// (due: pending rows; finished: delivered, dead and dropped ones), and the token index
    /// no longer carries the status, so recording an attempt moves a row out of one index
    /// and into another instead of rewriting an entry in all three (the writer's recording
    /// was most of a flood's CPU: docs/PUSH.md). The queries name the same predicates.
    static let partialIndexes = """
        DROP INDEX _push_deliveries_due;
        CREATE INDEX _push_deliveries_due ON _push_deliveries(next_attempt_at) WHERE status = 'pending';
        DROP INDEX _push_deliveries_finished;
        CREATE INDEX _push_deliveries_finished ON _push_deliveries(kind, updated_at) WHERE status IN ('delivered', 'dead', 'dropped');
        DROP INDEX _push_deliveries_token;
        CREATE INDEX _push_deliveries_token ON _push_deliveries(token);
        """

    /// SQLite's migration 12.
    static let migration = """
        ALTER TABLE _push_devices ADD COLUMN environment TEXT;
        ALTER TABLE _push_devices ADD COLUMN sync INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN seen_at TEXT;
        ALTER TABLE _push_devices ADD COLUMN deliveries INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE _push_devices ADD COLUMN last_error TEXT;
        ALTER TABLE _push_devices ADD COLUMN last_push_at TEXT;
        CREATE TABLE _push_deliveries (
            rid INTEGER PRIMARY KEY,
            token TEXT NOT NULL,
            user_id TEXT NOT NULL,
            platform TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('alert', 'background')),
            payload TEXT NOT NULL,
            collapse_id TEXT,
            status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'dropped')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            last_status INTEGER,
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX _push_deliveries_due ON _push_deliveries(status, next_attempt_at);
        CREATE INDEX _push_deliveries_token ON _push_deliveries(token, status);
        CREATE INDEX _push_deliveries_finished ON _push_deliveries(kind, status, updated_at);
        CREATE TABLE _push_attempts (
            delivery_rid INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            at TEXT NOT NULL,
            status INTEGER,
            error TEXT,
            PRIMARY KEY (delivery_rid, attempt)
        );
        """
}
