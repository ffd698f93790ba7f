/// The collections set up at run time, as every node reads them.
public protocol CollectionSettingsReading: AnyObject {
    /// Every record, dropped ones included, by name.
    func collectionSettings() throws -> [CollectionSettingsRecord]
    /// The highest version of any record (0 when there is none): one small read a node polls.
    func collectionSettingsVersion() throws -> Int64
    /// Up to `limit` documents of `collection` after the id `after`, in id
    /// order (emptying a collection and checking a schema walk them; not for callers' reads).
    func documentPage(in collection: String, after: String?, limit: Int) throws -> [(id: String, text: String)]
    /// Up to `limit` documents of `collection` after the row `afterRow`, in
    /// row order, among them every one whose `_acl.creator` is `userID` (and
    /// maybe others naming the user: the caller checks each), for an
    /// account's purge. SQLite reads the user's range of the acl table;
    /// PostgreSQL tests each row in the database.
    func creatorCandidates(in collection: String, userID: String, afterRow: Int64, limit: Int) throws -> [(rid: Int64, id: String, text: String)]
}
