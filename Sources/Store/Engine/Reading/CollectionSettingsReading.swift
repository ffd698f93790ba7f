/// The collections set up at run time, as every node reads them.
public protocol CollectionSettingsReading: AnyObject {
    /// Every record, dropped ones included, by name.
    func collectionSettings() throws -> [CollectionSettingsRecord]
    /// The highest version of any record (0 when there is none): one small read a node polls.
    func collectionSettingsVersion() throws -> Int64
    /// Up to `limit` documents of `collection` after the id `after`, in id
    /// order (emptying a collection and checking a schema walk them; not for callers' reads).
    func documentPage(in collection: String, after: String?, limit: Int) throws -> [(id: String, text: String)]
}
