import Foundation

/// A list request: a filter, a sort, paging, and references to resolve.
/// Its parameters are exactly Roost's `query`, `sort`, `limit`, `skip`,
/// `fields` and `resolve`.
///
/// ```swift
/// let q = Query(Field("categories").isIn(["Park", "Museum"]))
///     .sorted(by: "name").limit(20).skip(40)
/// let threads = Query().resolving("lastMessage")
/// ```
public struct Query: Sendable, Hashable {
    /// The filter, if any.
    public var filter: Filter?
    /// Sort keys in order, `1` ascending, `-1` descending.
    public var sort: [SortKey] = []
    /// At most this many (server default 100, at most 1000).
    public var limit: Int?
    /// Skip this many (deep pages cost what they skip; prefer ``after``).
    public var skip: Int?
    /// Keyset paging: the previous page's ``Page/next`` cursor (same filter and sort; not with `skip`).
    public var after: String?
    /// Top-level reference fields the server expands.
    public var resolve: [String] = []
    /// Top-level fields to return (`_id` always comes).
    public var fields: [String] = []

    /// A sort key.
    public struct SortKey: Sendable, Hashable {
        public let path: String
        public let ascending: Bool
    }

    /// Everything, or only what matches `filter`.
    public init(_ filter: Filter? = nil) { self.filter = filter }

    /// Adds a condition (joined to any earlier one with `&&`).
    public func and(_ f: Filter) -> Query { var q = self; q.filter = q.filter.map { $0 && f } ?? f; return q }
    /// Adds a sort key after the earlier ones.
    public func sorted(by path: String, ascending: Bool = true) -> Query {
        var q = self; q.sort.append(SortKey(path: path, ascending: ascending)); return q
    }
    /// Returns at most `n`.
    public func limit(_ n: Int) -> Query { var q = self; q.limit = n; return q }
    /// Skips `n`.
    public func skip(_ n: Int) -> Query { var q = self; q.skip = n; return q }
    /// The page after the one whose ``Page/next`` was `cursor` (keyset paging: stable while others write).
    public func after(_ cursor: String?) -> Query { var q = self; q.after = cursor; return q }
    /// Expands the reference fields `names` (one level, under the caller's rights).
    public func resolving(_ names: String...) -> Query { var q = self; q.resolve += names; return q }
    /// Returns only the top-level `names` (and `_id`).
    public func selecting(_ names: String...) -> Query { var q = self; q.fields += names; return q }

    /// The sort document's JSON text, keys in the order given.
    public var sortJSON: String? {
        guard !sort.isEmpty else { return nil }
        return "{" + sort.map { "\(JSONValue.string($0.path).jsonText):\($0.ascending ? 1 : -1)" }.joined(separator: ",") + "}"
    }

    /// The URL parameters of this query.
    var parameters: [(String, String)] {
        var out: [(String, String)] = []
        if let filter { out.append(("query", filter.json)) }
        if let sortJSON { out.append(("sort", sortJSON)) }
        if let limit { out.append(("limit", String(limit))) }
        if let skip { out.append(("skip", String(skip))) }
        if let after { out.append(("after", after)) }
        if !fields.isEmpty { out.append(("fields", fields.joined(separator: ","))) }
        if !resolve.isEmpty { out.append(("resolve", resolve.joined(separator: ","))) }
        return out
    }
}
