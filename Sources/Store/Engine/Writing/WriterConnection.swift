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
