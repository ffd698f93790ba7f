/// What the writer thread asks of the store, whichever engine holds it
/// (`DocumentWriter` on SQLite, `PostgresDocumentWriter` on PostgreSQL):
/// the writer's connection and one small protocol per area (`Writing/`).
/// One per process, on the writer thread; operations run inside
/// `commitBatch`, each undone alone when it fails. An area's code asks only
/// for its own protocols (`any AccountsWriting & LoginThrottleWriting`);
/// a new area adds a protocol here and conforms both engines to it.
public typealias DocumentWriting = WriterConnection
    & DocumentsWriting & SchemaWriting & IndexBuilding & FeedWriting
    & AccountsWriting & LoginThrottleWriting
    & FilesWriting
    & WebhooksWriting & PushWriting & MailWriting
    & ScheduledRunsWriting & RolesWriting & CollectionSettingsWriting & AccountJobsWriting
