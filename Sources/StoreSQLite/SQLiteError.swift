import CSQLite
import Store

/// An error reported by SQLite, with its extended result code.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public var description: String { "SQLite error \(code): \(message)" }

    /// True for UNIQUE and PRIMARY KEY violations.
    public var isUniqueViolation: Bool {
        // SQLITE_CONSTRAINT_UNIQUE and _PRIMARYKEY are macros Swift cannot import.
        code == (SQLITE_CONSTRAINT | (8 << 8)) || code == (SQLITE_CONSTRAINT | (6 << 8))
    }

    /// True when a query was too big for SQLite (expression depth, variables).
    public var isQueryTooLarge: Bool {
        message.contains("Expression tree is too large") || message.contains("too many SQL variables")
            || message.contains("too many terms")
    }

    /// True when the SQL nests deeper than SQLite's parser can take (its
    /// stack holds about 100 entries): deeply nested `$elemMatch`, `$not`,
    /// `$and` or `$or`.
    public var isQueryTooDeep: Bool { message.contains("parser stack overflow") }

    /// True when a time limit interrupted the statement.
    public var isInterrupted: Bool { code & 0xFF == SQLITE_INTERRUPT }

    /// True when a `$regex` hit PCRE2's backtracking limits.
    public var isRegexLimit: Bool { message.contains(RegexFunction.limitMessage) }

    /// True when the database was busy or locked past the busy timeout.
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
}

extension SQLiteError: DatabaseFailure {}
