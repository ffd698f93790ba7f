/// Migration 8: accounts by email, one-time codes and the mail outbox
/// (SQLite's migration 12). Emails are stored normalised (lower case), so a
/// plain unique index decides a race for an address, whichever node wins it.
extension PostgresMigrations {
    static let accountEmails = (version: 9, sql: """
        ALTER TABLE _credentials ADD COLUMN email text COLLATE "C";
        ALTER TABLE _credentials ADD COLUMN email_verified integer NOT NULL DEFAULT 0;
        CREATE UNIQUE INDEX _credentials_email ON _credentials (email);
        CREATE TABLE _account_codes (
            user_id text COLLATE "C" NOT NULL,
            purpose text COLLATE "C" NOT NULL,
            email text COLLATE "C" NOT NULL,
            code_hash text COLLATE "C" NOT NULL,
            link_hash text COLLATE "C" NOT NULL UNIQUE,
            expires_at bigint NOT NULL,
            attempts bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (user_id, purpose)
        );
        CREATE INDEX _account_codes_expiry ON _account_codes (expires_at);
        CREATE TABLE _mail_outbox (
            rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            recipient text NOT NULL,
            kind text NOT NULL,
            message text NOT NULL,
            status text NOT NULL CHECK (status IN ('pending', 'dead')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at bigint NOT NULL,
            last_error text,
            created_at bigint NOT NULL,
            updated_at bigint NOT NULL
        );
        CREATE INDEX _mail_outbox_due ON _mail_outbox (status, next_attempt_at);
        """)
}

/// Migration 9: sign-in identities and used ID tokens (SQLite's migration 13).
extension PostgresMigrations {
    static let identities = (version: 10, sql: """
        CREATE TABLE _identities (
            provider text COLLATE "C" NOT NULL,
            subject text COLLATE "C" NOT NULL,
            user_id text COLLATE "C" NOT NULL,
            email text,
            created_at bigint NOT NULL,
            PRIMARY KEY (provider, subject)
        );
        CREATE UNIQUE INDEX _identities_user ON _identities (user_id, provider);
        CREATE TABLE _idtokens_used (
            token_hash text COLLATE "C" PRIMARY KEY,
            expires_at bigint NOT NULL
        );
        CREATE INDEX _idtokens_used_expiry ON _idtokens_used (expires_at);
        """)
}

/// Migration 10: anonymous (guest) accounts (SQLite's migration 14).
extension PostgresMigrations {
    static let anonymous = (version: 11, sql: """
        ALTER TABLE _credentials ADD COLUMN anonymous_since bigint;
        CREATE INDEX _credentials_anonymous ON _credentials (anonymous_since) WHERE anonymous_since IS NOT NULL;
        """)
}

/// Migration 11: two-factor (TOTP) columns (SQLite's migration 15).
extension PostgresMigrations {
    static let twoFactor = (version: 12, sql: """
        ALTER TABLE _credentials ADD COLUMN totp_secret text;
        ALTER TABLE _credentials ADD COLUMN totp_enabled integer NOT NULL DEFAULT 0;
        ALTER TABLE _credentials ADD COLUMN totp_last_step bigint NOT NULL DEFAULT 0;
        ALTER TABLE _credentials ADD COLUMN totp_recovery text NOT NULL DEFAULT '[]';
        """)
}
