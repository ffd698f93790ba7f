import JSON

/// How delta sync pages, said once for both engines: each engine reads its
/// rows with its own SQL and hands them here.
public enum DeltaPaging {
    /// A page of the first full listing (`rows` in row order, up to
    /// `limit + 1`; `rowID` gives a row's id), pinned to the feed position `start` it
    /// began at: later pages judge deletes by every state since then (rows
    /// created meanwhile may have been listed).
    public static func listing<Row>(_ rows: [Row], rowID: (Row) -> Int64, limit: Int, start: Int64,
                                    epoch: String, level: String) -> (page: ArraySlice<Row>, cursor: FeedCursor, more: Bool) {
        let more = rows.count > limit
        let page = rows.prefix(limit)
        let cursor = FeedCursor(epoch: epoch, level: level, seq: start, afterRowID: more ? page.last.map(rowID) : nil, base: start)
        return (page, cursor, more)
    }

    /// A page of the entities changed after `since` (`entries`: id and its
    /// latest position, in that order, up to `limit + 1`) and the cursor past
    /// it: the page's last position when more follow (keeping the sync's
    /// base), else `head`.
    public static func changes(_ entries: [(id: String, seq: Int64)], limit: Int, head: Int64, since: FeedCursor,
                               epoch: String, level: String) -> (ids: [String], cursor: FeedCursor, more: Bool) {
        let more = entries.count > limit
        let page = Array(entries.prefix(limit))
        let end = more ? page.last!.seq : head
        let base = since.base ?? since.seq
        let cursor = FeedCursor(epoch: epoch, level: level, seq: end, afterRowID: nil, base: more ? base : nil)
        return (page.map(\.id), cursor, more)
    }

    /// Of the entities gone from view, those the caller could read at the
    /// cursor; while a sync is paged (or just after a listing), those it
    /// could read in any state they had since the sync began, which a
    /// previous page may have sent.
    /// - Parameter states: (id, state before the change) of `hidden`'s
    ///   changes after `since.base ?? since.seq`, in feed order.
    public static func knownDeleted(_ hidden: [String], states: [(String, String?)], since: FeedCursor, scope: AccessScope) -> [String] {
        var judged = Set<String>(), known = Set<String>()
        for (id, text) in states where !judged.contains(id) {
            if since.base == nil { judged.insert(id) } // only the state at the cursor counts
            guard let text, case .object(let old)? = try? JSONParser.parse(text) else { continue }
            if scope.canRead(old) { known.insert(id); judged.insert(id) }
        }
        return hidden.filter(known.contains)
    }

    /// `current` (id, text) in the order of `ids` (the page's).
    public static func inPageOrder(_ current: [(String, String)], ids: [String]) -> [(String, String)] {
        let order = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        return current.sorted { order[$0.0, default: 0] < order[$1.0, default: 0] }
    }
}
