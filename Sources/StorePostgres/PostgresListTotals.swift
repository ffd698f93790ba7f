/// How many rows each list shape matched last time, so a list with a total
/// can choose how to count: in its page's own scan (`count(*) OVER ()`) or
/// with a `count(*)` of its own.
///
/// The window is nearly free when the page reads every match anyway (a
/// filtered scan and a top-N sort of a few hundred rows: the count saved
/// there is half the list's time). Over many matches it is the slower way:
/// it buffers every match with its document, and it stops the page from
/// ending an index walk early, where a separate count can read an index
/// only (20 ms against 2 ms over 20,000 rows, measured). So a shape is
/// counted in the scan only after one of its totals came back small;
/// one that is new, or matched many last time, is counted apart. A shape
/// whose matches grow costs one slow page, then is counted apart again.
///
/// A shape is the collection's table, the condition's SQL (parameters are
/// not part of it: `category = $1` is one shape for every category) and,
/// where rows are private, the caller: how one caller's list is counted,
/// and so how long it takes, never depends on rows only another could see.
/// One per reader, used by its thread alone.
struct PostgresListTotals {
    /// The most matches a shape may have had for its next total to come from the page's scan.
    var windowLimit = 1_000
    /// Shapes remembered before the memo starts again (each entry is two integers).
    static let capacity = 512
    private var lastTotals: [Int: Int] = [:]

    /// The key of a list's shape.
    static func shape(table: String, condition: String, caller: String?) -> Int {
        var hasher = Hasher()
        hasher.combine(table)
        hasher.combine(condition)
        hasher.combine(caller)
        return hasher.finalize()
    }

    /// Whether the next total of `shape` should be counted in the page's scan.
    func countsInScan(_ shape: Int) -> Bool {
        lastTotals[shape].map { $0 <= windowLimit } ?? false
    }

    mutating func record(_ shape: Int, total: Int) {
        if lastTotals.count >= Self.capacity, lastTotals[shape] == nil { lastTotals.removeAll(keepingCapacity: true) }
        lastTotals[shape] = total
    }
}
