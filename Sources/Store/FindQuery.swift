import JSON

/// A list request: filter, sort, paging and projection, already validated.
public struct FindQuery: Sendable {
    public static let defaultLimit = 100
    public static let maxLimit = 1000

    public var filter: JSONValue
    /// Field and direction (1 or -1), in priority order.
    public var sort: [(field: String, ascending: Bool)]
    public var limit: Int
    public var skip: Int
    /// Top-level fields to return; `_id` is always included. Nil returns all.
    public var fields: [String]?
    /// The `after` cursor of the previous page (`ListPage.next`): keyset paging.
    public var after: String?

    public init(filter: JSONValue = .object(JSONObject()), sort: [(field: String, ascending: Bool)] = [],
                limit: Int = FindQuery.defaultLimit, skip: Int = 0, fields: [String]? = nil, after: String? = nil) {
        self.filter = filter
        self.sort = sort
        self.limit = limit
        self.skip = skip
        self.fields = fields
        self.after = after
    }

    /// Parses a sort spec such as `{"name":1,"_createdAt":-1}`.
    public static func parseSort(_ value: JSONValue) throws(QueryError) -> [(field: String, ascending: Bool)] {
        guard case .object(let o) = value else { throw .invalid("sort must be a JSON object such as {\"name\":1}.") }
        var out: [(field: String, ascending: Bool)] = []
        for (field, direction) in o {
            _ = try FieldPath(field)
            switch direction {
            case .int(1), .double(1): out.append((field, true))
            case .int(-1), .double(-1): out.append((field, false))
            default: throw .invalid("sort direction for \"\(field)\" must be 1 or -1.")
            }
        }
        return out
    }
}
