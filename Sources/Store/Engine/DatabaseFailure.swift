/// An engine's own error (`SQLiteError`, `PGError`), as the handlers need to
/// tell its kinds apart: each kind answers the same on either engine.
public protocol DatabaseFailure: Error, Sendable, CustomStringConvertible {
    /// The database is busy or locked, or the connection to it was lost: try again later (503).
    var isBusy: Bool { get }
    /// The statement was too large for the engine (400).
    var isQueryTooLarge: Bool { get }
    /// The statement nested too deeply for the engine's parser (400).
    var isQueryTooDeep: Bool { get }
    /// A `$regex` ran out of its backtracking or memory budget (400).
    var isRegexLimit: Bool { get }
    /// The statement was stopped at its time limit (503 QueryTimeout; a reader's slice).
    var isInterrupted: Bool { get }
    /// The database ran short of memory, disk, connections or a limit its operator set (503).
    var isOutOfResources: Bool { get }
}

extension DatabaseFailure {
    public var isOutOfResources: Bool { false }
}
