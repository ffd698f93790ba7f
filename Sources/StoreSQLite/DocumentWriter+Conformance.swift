import Store

/// The SQLite engine's connections under the Store seam.
extension DocumentWriter: DocumentWriting {
    public func commitBatch<T>(_ operations: [(any DocumentWriting) throws -> T]) -> [Result<T, any Error>] {
        commitBatch(operations.map { operation in { (writer: DocumentWriter) in try operation(writer) } })
    }

    /// SQLite writes each row at once.
    public func settleHeldWrite() throws {}

    public func readerInTransaction() throws -> any DocumentReading { DocumentReader(sharing: db, catalog: catalog) }
}

extension DocumentReader: DocumentReading {}
