/// Giving each change of a feed page its after-state, said once for both engines.
extension FeedChange {
    /// One `_changes` row: a change without its after-state; `before` as the
    /// feed keeps it (`FeedPrevious`: whole, or a reverse patch).
    public typealias Row = (seq: Int64, coll: String, id: String, op: ChangeFeed.Operation, at: Int64, before: String?)

    /// The changes of `rows` (in feed order), each with the entity as it
    /// committed: nil for a delete, else the `before` of the entity's next
    /// change in `rows`, else `committed(collection, id)` (its state after
    /// the page: the engine reads the feed beyond, or the row now). Walks
    /// backwards, asking `committed` once per entity, newest first.
    public static func withAfterStates(_ rows: [Row], committed: (_ collection: String, _ id: String) throws -> String?) rethrows -> [FeedChange] {
        var next: [String: FeedPrevious.State] = [:] // key: the entity's state after the last change seen so far (walking backwards)
        var out: [FeedChange] = []
        out.reserveCapacity(rows.count)
        for row in rows.reversed() {
            let key = row.coll + "\u{0}" + row.id
            let after: FeedPrevious.State
            if row.op == .delete {
                after = FeedPrevious.State(text: nil)
            } else if let known = next[key] {
                after = known
            } else {
                after = FeedPrevious.State(text: try committed(row.coll, row.id))
            }
            let before = FeedPrevious.before(row.before, after: after)
            next[key] = before
            out.append(FeedChange(seq: row.seq, collection: row.coll, id: row.id, operation: row.op, at: row.at,
                                  before: before.text, after: after.text))
        }
        return out.reversed()
    }
}
