/// What the API's reader threads ask of the store, whichever engine holds it
/// (`DocumentReader` on SQLite, `PostgresDocumentReader` on PostgreSQL): the
/// reader's connection and one small protocol per area (`Reading/`).
/// One value per reader thread, confined to it. Every method keeps access
/// rules inside the engine's SQL, and both engines give the same answers and
/// errors (docs/ENGINES.md).
public typealias DocumentReading = ReaderConnection
    & DocumentsReading & FeedReading
    & AccountsReading & FilesReading
    & WebhooksReading & PushReading
    & AdminReading & RolesReading & CollectionSettingsReading
    & QueueDueReading

/// Where a session token is looked up: a reader, or the writer inside its transaction.
public protocol SessionLookup: AnyObject {
    func session(tokenHash: String, now: Int64) throws -> SessionRecord?
}
