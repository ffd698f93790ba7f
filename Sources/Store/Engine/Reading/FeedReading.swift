import JSON

/// The change feed, delta sync and live streams.
public protocol FeedReading: AnyObject {
    func cursorSeal() throws -> CursorSeal
    func delta(_ collection: String, since: FeedCursor?, filter: JSONValue, limit: Int, scope: AccessScope, redaction: Redaction?) throws -> DeltaPage
    func feedMeta() throws -> (epoch: String, horizon: Int64)
    func feedHead() throws -> Int64
    func changes(after seq: Int64, limit: Int) throws -> (changes: [FeedChange], head: Int64)
    func probe(_ filter: JSONValue) throws -> FilterProbe
}

extension FeedReading {
    public func delta(_ collection: String, since: FeedCursor?, filter: JSONValue, limit: Int, scope: AccessScope) throws -> DeltaPage {
        try delta(collection, since: since, filter: filter, limit: limit, scope: scope, redaction: nil)
    }
}
