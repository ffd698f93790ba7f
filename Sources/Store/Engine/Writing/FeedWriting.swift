/// The change feed's upkeep: compaction and a new epoch.
public protocol FeedWriting: AnyObject {
    func compactChanges(retention: Int64) throws -> Int
    func renewFeedEpoch() throws
}
