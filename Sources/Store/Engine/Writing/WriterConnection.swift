/// The writer's connection itself: migrations, group commits, transactions,
/// and the upkeep only SQLite needs (no-ops elsewhere). One per process, on
/// the writer thread; operations run inside `commitBatch`, each undone
/// alone when it fails.
public protocol WriterConnection: AnyObject {
    func migrate() throws
    /// Runs `operations` in one transaction; each outcome after COMMIT.
    func commitBatch<T>(_ operations: [(any DocumentWriting) throws -> T]) -> [Result<T, any Error>]
    /// Inside an operation that makes several writes: settles the writes
    /// made so far (PostgreSQL may hold a create until the batch's end) and
    /// throws the error one of them met. A no-op where writes go at once.
    func settleHeldWrite() throws
    /// Inside an operation made of parts (a `/_batch`'s items): the writes
    /// that follow are part `part`. PostgreSQL then holds every create of the
    /// operation until its next statement or `settleHeldWrite`, which throws
    /// a refused create's error as a `HeldWriteFailure` naming its part (the
    /// lowest one). A no-op where writes go at once.
    func holdWrites(part: Int)
    /// Runs `body` in a transaction of its own (outside `commitBatch`).
    func transaction<T>(_ body: () throws -> T) throws -> T
    /// Reads (get, find, count) on this connection, inside the running
    /// transaction: they see its writes so far (scripts' before hooks).
    func readerInTransaction() throws -> any DocumentReading
    /// Checkpoints SQLite's WAL (a no-op where the server owns its log).
    func checkpoint()
    /// Caps SQLite's page cache (a no-op on engines without one).
    func limitPageCache(bytes: Int) throws
}

extension WriterConnection {
    public func holdWrites(part: Int) {}
}

/// A held create of part `part` of an operation was refused with `error` (`WriterConnection.holdWrites`).
public struct HeldWriteFailure: Error {
    public let part: Int
    public let error: any Error

    public init(part: Int, error: any Error) {
        self.part = part
        self.error = error
    }
}
