import Store

/// The PostgreSQL engine behind the store seam: the reader and writer give
/// Roost the same methods as SQLite's (their own files, by area); what only
/// SQLite has is a no-op here.
extension PostgresDocumentReader: DocumentReading {
    /// PostgreSQL's buffer cache is the server's (`shared_buffers`).
    public func limitPageCache(bytes: Int) throws {}
    /// Nothing to map: the database is not a local file.
    public func mapFile(bytes: Int) throws {}
}

extension PostgresDocumentWriter: DocumentWriting {
    public func commitBatch<T>(_ operations: [(any DocumentWriting) throws -> T]) -> [Result<T, any Error>] {
        commitBatch(operations.map { operation in { (writer: PostgresDocumentWriter) in try operation(writer) } })
    }

    public func limitPageCache(bytes: Int) throws {}

    /// Reads inside the writer's transaction (their snapshots become savepoints), after its held creates are sent.
    public func readerInTransaction() throws -> any DocumentReading {
        try settleHeldWrite()
        return PostgresDocumentReader(sharing: db, catalog: catalog)
    }
}

extension PGError: DatabaseFailure {
    /// A lost connection or a serialization failure: the operation did not happen; try again.
    public var isBusy: Bool { isRetryable && !isPoolerMismatch }
    /// `stack depth limit exceeded` (54001) and `statement too complex` (54P01... class 54) are too large already.
    public var isQueryTooDeep: Bool { false }
    /// PostgreSQL's regex engine reports a pattern too complex as 2201B.
    public var isRegexLimit: Bool { sqlState == "2201B" }
    /// `statement_timeout` (57014).
    public var isInterrupted: Bool { isCanceled }
    /// Class 53 (out of memory, disk full, too many connections, `temp_file_limit`) and a
    /// lock not granted within `lock_timeout` (55P03): the request was refused, not wrong.
    /// A pooler in transaction mode under roostd's prepared statements is a
    /// deployment's fault, never the request's: 503, and the log says why.
    public var isOutOfResources: Bool { sqlState.hasPrefix("53") || sqlState == "55P03" || isPoolerMismatch }
}

extension PostgresChangeListener: CommitWatch {
    public func stop() { _ = stop(timeout: 5) }
}
