import HTTP
import JSON
import Schema
import Store

extension StoreError: HTTPErrorConvertible {
    /// The client-facing form of a store failure.
    public var httpError: HTTPError {
        switch self {
        case .notFound(let d): return .notFound(d)
        case .unauthorized(let d):
            return HTTPError(.unauthorized, d, headers: Headers([("WWW-Authenticate", "Bearer realm=\"roost\"")]))
        case .forbidden(let d): return HTTPError(.forbidden, d)
        case .ruleDenied(let d): return HTTPError(.accessRuleDenied, d)
        case .conflict(let d): return .conflict(d)
        case .expired(let d): return HTTPError(.cursorExpired, d)
        case .invalid(let d): return HTTPError(.invalidDocument, d)
        case .schemaViolation(let collection, let violations):
            let first = violations.first.map { ($0.instancePointer.isEmpty ? "the document" : $0.instancePointer) + ": " + $0.message } ?? ""
            let more = violations.count >= JSONSchema.maxViolations ? " (the first \(violations.count) are in violations)"
                : violations.count > 1 ? " (and \(violations.count - 1) more, in violations)" : ""
            let list = violations.map(\.json)
            return HTTPError(.schemaViolation, "The document does not match \(collection)'s schema: \(first)\(more).",
                             fields: JSONObject([("violations", .array(list))]))
        case .query(let q):
            return HTTPError(q.kind == .unsupportedOperator ? .unsupportedOperator : .invalidQuery, q.message)
        case .database(let e):
            if e.isBusy { return .overloaded() }
            if e.isQueryTooLarge {
                return HTTPError(.invalidQuery, "The query is too large for the database; split it into smaller ones.")
            }
            if e.isQueryTooDeep {
                return HTTPError(.invalidQuery, "The query nests too deeply for the database; use fewer levels of $elemMatch, $not, $and and $or inside one another.")
            }
            if e.isRegexLimit {
                return HTTPError(.regexTooComplex, "A $regex needed too much backtracking or memory and was stopped; simplify the pattern (avoid nested repetition such as (a|aa)+).")
            }
            if e.isInterrupted {
                return HTTPError(.queryTimeout, "The query ran past its time limit (query_time_limit) and was stopped; narrow it, page it with after=, or index the fields it filters and sorts on.",
                                 headers: Headers([("Retry-After", "1")]))
            }
            if e.isOutOfResources {
                return HTTPError(.databaseBusy, "The database ran short of memory, disk, connections or a limit its operator set for this request; retry later, or narrow the query (fewer rows, an index for its sort).",
                                 headers: Headers([("Retry-After", "5")]))
            }
            return .internalError("The database reported an error; the request changed nothing.")
        }
    }
}

extension SchemaViolation {
    /// As answers list it: `{pointer, keyword, schemaPath, message}` (docs/SCHEMAS.md).
    var json: JSONValue {
        .object(JSONObject([("pointer", .string(instancePointer)), ("keyword", .string(keyword)),
                            ("schemaPath", .string(schemaPath)), ("message", .string(message))]))
    }
}
