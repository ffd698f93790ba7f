import Foundation
import HTTP
import JSON
import Store

/// Reads `query`, `sort`, `limit`, `skip` and `fields` from a list request.
enum ListParameters {
    static func filter(_ request: Request) throws -> JSONValue {
        guard let text = request.query["query"], !text.isEmpty else { return .object(JSONObject()) }
        do {
            return try JSONParser.parse(text)
        } catch {
            throw HTTPError(.invalidQuery, "The query parameter is not valid JSON: \(error).")
        }
    }

    static func find(_ request: Request) throws -> FindQuery {
        var find = FindQuery(filter: try filter(request))
        if let text = request.query["sort"], !text.isEmpty {
            let value: JSONValue
            do { value = try JSONParser.parse(text) } catch {
                throw HTTPError(.invalidQuery, "The sort parameter is not valid JSON: \(error).")
            }
            find.sort = try FindQuery.parseSort(value)
        }
        if let text = request.query["limit"] {
            guard let n = Int(text), n >= 0 else { throw HTTPError(.invalidQuery, "limit must be a whole number from 0 to \(FindQuery.maxLimit).") }
            guard n <= FindQuery.maxLimit else {
                throw HTTPError(.invalidQuery, "limit may be at most \(FindQuery.maxLimit); page with skip.")
            }
            find.limit = n == 0 ? FindQuery.defaultLimit : n
        }
        if let text = request.query["skip"] {
            guard let n = Int(text), n >= 0 else { throw HTTPError(.invalidQuery, "skip must be a non-negative whole number.") }
            find.skip = n
        }
        if let text = request.query["fields"], !text.isEmpty {
            let names = text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            for name in names where name.isEmpty || name.contains(".") || name.hasPrefix("$") {
                throw HTTPError(.invalidQuery, "fields takes top-level field names separated by commas (\"\(name)\" is not one).")
            }
            find.fields = names
        }
        if let text = request.query["after"], !text.isEmpty {
            guard find.skip == 0 else { throw HTTPError(.invalidQuery, "after and skip cannot be combined; after already says where the page starts.") }
            find.after = text
        }
        return find
    }

    /// True when an administrator asked how the list would be read (`explain=true`).
    static func wantsExplain(_ request: Request) throws -> Bool {
        switch request.query["explain"] {
        case nil, "false", "0": return false
        case "true", "1": return true
        default: throw HTTPError(.invalidQuery, "explain takes true or false.")
        }
    }

    /// True when the client asked for `X-Total-Count` with `count=true`.
    static func wantsTotal(_ request: Request) -> Bool {
        guard let v = request.query["count"] else { return false }
        return v == "true" || v == "1"
    }
}
