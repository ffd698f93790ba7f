import Foundation
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

    /// The text clients hold: base64url of a small JSON object.
    public var token: String {
        var object = JSONObject()
        object["o"] = .string(order)
        object["v"] = .array(values.map(\.jsonValue))
        return Data(JSONValue.object(object).jsonText.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Checks that `token` is a cursor at all, whatever its order (for a
    /// list with nothing to page, which must still refuse a made-up one).
    public static func check(token: String) throws(QueryError) {
        let parts = try? JSONParser.parse(String(decoding: Self.bytes(token) ?? [], as: UTF8.self))
        guard case .object(let object)? = parts, case .string(let order)? = object["o"], case .array(let items)? = object["v"] else {
            throw refusal
        }
        _ = try KeysetCursor(token: token, order: order, count: items.count)
    }

    static let refusal = QueryError.invalid("after is not a cursor of this list's order; start again without after (or with the same sort and query).")

    static func bytes(_ token: String) -> [UInt8]? {
        guard token.utf8.count <= maxTokenBytes else { return nil }
        var b64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.utf8.count % 4 != 0 { b64 += "=" }
        return Data(base64Encoded: b64).map { Array($0) }
    }

    /// Parses `token` for the order `order` and `count` values.
    public init(token: String, order: String, count: Int) throws(QueryError) {
        let refusal = Self.refusal
        guard let bytes = Self.bytes(token), let text = String(validating: bytes, as: UTF8.self),
              case .object(let object)? = try? JSONParser.parse(text),
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
