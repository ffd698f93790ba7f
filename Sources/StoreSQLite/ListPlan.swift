import JSON
import Store

/// How one page of a list is read: SQL segments, run in order until the
/// page is full. Every segment selects the document, then the sort-key
/// values and the row id (for the next page's `after` cursor).
///
/// - `scan`: one statement finds every visible match and sorts it. SQLite
///   keeps only `skip + limit` rows in its sorter, so memory stays bounded,
///   but the time grows with the matches; long ones move to the slow lane.
/// - `lookup`: one equality's index entries, in row order, stopping at the page.
/// - `walk`: rows in the order of the index on the first sort key, one type
///   bracket per segment, stopping at the page: O(page × log n).
/// - `nearest`: `$nearSphere` as boxes on the R*Tree, each four times wider,
///   until one holds the page: the points measured grow with the page, not
///   the collection. Each segment is a whole answer; the first full one wins.
/// - `geoWalk`: an unsorted top-level `$geoWithin`: first the box's points in
///   row order among the next `window` row ids (small rows of the points
///   table, stopping at the page), then, past the window, the R*Tree's
///   matches gathered and sorted (few, or the walk would have filled the page).
/// - `rowPage`: a `skip` page of every row in row order: its row ids are
///   counted off the row-id index (`Catalog.rowIndexSQL`), whose entries are a
///   few bytes, then only the page's documents are read. Skipping over the
///   table itself would read every skipped document.
struct ListPlan {
    enum Strategy: String {
        case scan, lookup = "index-lookup", walk = "index-walk", nearest = "nearest-widening", geoWalk = "geo-walk"
        case rowPage = "row-index-page"
    }

    struct Segment {
        var condition: String
        var orderBy: String
        /// This segment's own `FROM …`, when not the plan's.
        var from: String? = nil
    }

    var strategy: Strategy
    /// `SELECT …`, the columns.
    var select: String
    /// `FROM …`, for the rows and for counting a segment's rows when skipping.
    var from: String
    var segments: [Segment]
    var params: [SQLValue]
    /// Columns after the document: key values, then the row id.
    var keyColumns: Int
    /// Names the order, so an `after` cursor is used only with its own.
    var order: String
    /// Whether the first key column is each document's distance in metres, to be
    /// handed on with the page (`ListPage.distances`): a nearest page of whole documents.
    var distanceKey = false

    /// The SQL of segment `i`, with `LIMIT` and `OFFSET` bound at `limitParam`, `limitParam + 1`.
    func sql(_ i: Int, limitParam: Int) -> String {
        let segment = segments[i]
        let order = segment.orderBy.isEmpty ? "" : " ORDER BY \(segment.orderBy)"
        if strategy == .rowPage {
            // `condition` is the row-id query the page is cut from.
            return "\(select) \(from(i)) WHERE d.rid IN (\(segment.condition)\(order) LIMIT ?\(limitParam) OFFSET ?\(limitParam + 1))\(order)"
        }
        return "\(select) \(from(i)) WHERE \(segment.condition)\(order) LIMIT ?\(limitParam) OFFSET ?\(limitParam + 1)"
    }

    /// The `FROM …` of segment `i`.
    func from(_ i: Int) -> String { segments[i].from ?? from }
}

/// A range on one field that an index walk can search instead of filter:
/// bounds of one type bracket (numbers or strings), e.g. `{"$gt": 1500}`.
struct RangeBounds {
    let field: String
    let bracket: Int64
    /// SQL operator and bound, e.g. (">", .int(1500)).
    let bounds: [(op: String, value: SQLValue)]

    /// The range on `field` among `filter`'s top-level members, if it is one.
    init?(_ filter: JSONValue, field: String) {
        guard case .object(let ops)? = filter.objectValue?[field], !ops.isEmpty else { return nil }
        var bracket: Int64?
        var bounds: [(op: String, value: SQLValue)] = []
        for (op, arg) in ops {
            guard let sqlOp = ["$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="][op] else { return nil }
            let (b, value): (Int64, SQLValue)
            switch arg {
            case .int(let i): (b, value) = (2, .int(i))
            case .double(let d) where d.isFinite: (b, value) = (2, .double(d))
            case .string(let s): (b, value) = (3, .text(s))
            default: return nil
            }
            guard bracket == nil || bracket == b else { return nil }
            bracket = b
            bounds.append((sqlOp, value))
        }
        guard let bracket else { return nil }
        self.field = field
        self.bracket = bracket
        self.bounds = bounds
    }

    /// The first top-level member of `filter` that is a range, among `fields`.
    static func first(in filter: JSONValue, among fields: [String]) -> RangeBounds? {
        for field in fields { if let r = RangeBounds(filter, field: field) { return r } }
        return nil
    }
}

extension ListPlan {
    /// `(e1, …, en) > (c1, …, cn)` in the keys' own directions, as SQL that
    /// needs no row values: the cursor's position, strictly after it.
    static func after(_ keys: [(sql: String, ascending: Bool)], _ values: [String]) -> String {
        var terms: [String] = []
        for i in keys.indices {
            var parts = (0..<i).map { "\(keys[$0].sql) IS \(values[$0])" }
            parts.append("\(keys[i].sql) \(keys[i].ascending ? ">" : "<") \(values[i])")
            terms.append("(" + parts.joined(separator: " AND ") + ")")
        }
        return terms.isEmpty ? "1" : "(" + terms.joined(separator: " OR ") + ")"
    }

    static func orderBy(_ keys: some Sequence<(sql: String, ascending: Bool)>) -> String {
        keys.map { "\($0.sql) \($0.ascending ? "ASC" : "DESC")" }.joined(separator: ", ")
    }
}
