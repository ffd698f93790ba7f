import Store

/// An error reported by PostgreSQL or libpq, with its SQLSTATE.
///
/// `storeError` maps what a client caused to the errors the SQLite engine
/// gives for the same thing (a taken `_id` is `StoreError.conflict`); a lost
/// connection or a server going away stays a `PGError` whose `isRetryable`
/// is true: the handlers' mapping to 503 lands with the handler seam (see
/// docs/ENGINES.md).
public struct PGError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, or "" when libpq failed before the server answered.
    public let sqlState: String
    public let message: String

    public var description: String {
        let text = "PostgreSQL error \(sqlState.isEmpty ? "(no SQLSTATE)" : sqlState): \(message)"
        return isPoolerMismatch ? text + " (" + Self.poolerAdvice + ")" : text
    }

    /// A prepared statement that vanished, already exists, or has other
    /// parameters than this connection prepared (26000, 42P05, 08P01 "bind
    /// message supplies"): the session under the connection changed, which
    /// only a pooler in transaction or statement mode does.
    public var isPoolerMismatch: Bool {
        sqlState == "26000" || sqlState == "42P05" || (sqlState == "08P01" && message.hasPrefix("bind message supplies"))
    }

    static let poolerAdvice = "a pooler in transaction or statement mode sits between roostd and PostgreSQL and swaps the session "
        + "under its prepared statements: use PgBouncer in session mode, or connect directly (docs/SCALING.md)"

    /// A UNIQUE or PRIMARY KEY violation (23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// The connection is gone (class 08, the server shutting down, or no
    /// answer at all): the operation did not happen or its outcome is
    /// unknown, and a new connection may succeed.
    public var isConnectionLost: Bool {
        sqlState.isEmpty || sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// A serialization failure or deadlock (class 40): retrying the whole transaction may succeed.
    public var isTransactionRollback: Bool { sqlState.hasPrefix("40") }

    /// Retrying later may succeed.
    public var isRetryable: Bool { isConnectionLost || isTransactionRollback }

    /// `statement_timeout` or a cancel stopped the statement (57014).
    public var isCanceled: Bool { sqlState == "57014" }

    /// The statement was too large or complex for the server (class 54).
    public var isQueryTooLarge: Bool { sqlState.hasPrefix("54") }

    /// A value too large for one entry of an index (54000, "index row size … exceeds …" or
    /// "index row requires …"): a declared index's field (or `username`) holds a value
    /// past PostgreSQL's limit of about 2,700 bytes per B-tree entry.
    public var isIndexEntryTooLarge: Bool { sqlState == "54000" && message.hasPrefix("index row") }

    /// The error as the store reports it where it has an equal on SQLite.
    public var storeError: any Error {
        if isIndexEntryTooLarge {
            return StoreError.invalid("A value of an indexed field is too large for PostgreSQL's index (about 2,700 bytes at most); "
                + "shorten it, or ask the operator to remove the field from the collection's indexes.")
        }
        if isQueryTooLarge { return StoreError.query(.invalid("The query is too large for the database; split it into smaller ones.")) }
        return self
    }
}
