import JSON

/// Where the next page of a list starts (`after=`): the sort-key values of
/// the last row a page returned, and the order they belong to.
///
/// Paging by keys instead of `skip` makes page 1,000 cost what page 1 does,
/// and a row written between two pages neither repeats nor hides another.
/// The values are compared as bound parameters only; a cursor from another
/// order (another `sort`, or a filter that changes the default order) is
/// refused with 400.
public struct KeysetCursor: Equatable, Sendable {
    /// The order, e.g. `n:1,_id:-1` (see `ListPlan.signature`).
    public let order: String
    /// One value per key expression (brackets included), then the row id.
    public let values: [SQLValue]

    public init(order: String, values: [SQLValue]) {
        self.order = order
        self.values = values
    }

    static let maxTokenBytes = 8192
    /// The version byte of a sealed keyset cursor (feed cursors use another).
    static let sealVersion: UInt8 = 3
    /// The sealed text is padded with spaces to a multiple of this many
    /// bytes past the length it would have with the widest row id, so a
    /// token's length does not follow the row id's digits.
    static let padding = 64

    /// The text clients hold: the order and values as JSON, padded and
    /// sealed (`CursorSeal`), so it reveals nothing (not even the row id,
    /// whose gaps would count other callers' inserts) and cannot be forged.
    public func token(_ seal: CursorSeal) -> String {
        var text = Array(Self.json(order, values).utf8)
        let widest = Self.json(order, values.dropLast() + [.int(Int64.min)]).utf8.count
        let target = (widest + Self.padding - 1) / Self.padding * Self.padding
        text += [UInt8](repeating: UInt8(ascii: " "), count: max(0, target - text.count))
        return seal.seal(text, version: Self.sealVersion)
    }

    private static func json(_ order: String, _ values: [SQLValue]) -> String {
        var object = JSONObject()
        object["o"] = .string(order)
        object["v"] = .array(values.map(\.jsonValue))
        return JSONValue.object(object).jsonText
    }

    /// Checks that `token` is a cursor at all, whatever its order (for a
    /// list with nothing to page, which must still refuse a made-up one).
    public static func check(token: String, seal: CursorSeal) throws(QueryError) {
        guard case .object(let object)? = contents(token, seal), case .string(let order)? = object["o"],
              case .array(let items)? = object["v"] else {
            throw refusal
        }
        _ = try KeysetCursor(token: token, order: order, count: items.count, seal: seal)
    }

    static let refusal = QueryError.invalid("after is not a cursor of this list's order; start again without after (or with the same sort and query).")

    /// The JSON a token sealed, or nil when this database did not seal it.
    public static func contents(_ token: String, _ seal: CursorSeal) -> JSONValue? {
        guard let bytes = seal.open(token, version: sealVersion, maxLength: maxTokenBytes),
              let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var trimmed = Substring(text)
        while trimmed.last == " " { trimmed = trimmed.dropLast() }
        return try? JSONParser.parse(String(trimmed))
    }

    /// Parses `token` for the order `order` and `count` values.
    public init(token: String, order: String, count: Int, seal: CursorSeal) throws(QueryError) {
        let refusal = Self.refusal
        guard case .object(let object)? = Self.contents(token, seal),
              object["o"] == .string(order), case .array(let items)? = object["v"], items.count == count else { throw refusal }
        var values: [SQLValue] = []
        for item in items {
            switch item {
            case .null: values.append(.null)
            case .int(let i): values.append(.int(i))
            case .double(let d): values.append(.double(d))
            case .string(let s) where !s.utf8.contains(0): values.append(.text(s))
            default: throw refusal
            }
        }
        guard case .int = values.last else { throw refusal }
        self.init(order: order, values: values)
    }
}

extension SQLValue {
    var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .int(let i): return .int(i)
        case .double(let d): return d.isFinite ? .double(d) : .null
        case .text(let s): return .string(s)
        }
    }
}
