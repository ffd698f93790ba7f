import HTTP
import Store

extension HTTPError {
    /// The client-facing form of a store failure.
    static func from(_ error: StoreError) -> HTTPError {
        switch error {
        case .notFound(let d): return .notFound(d)
        case .conflict(let d): return .conflict(d)
        case .invalid(let d): return HTTPError(400, "InvalidDocument", d)
        case .query(let q):
            return HTTPError(400, q.kind == .unsupportedOperator ? "UnsupportedOperator" : "InvalidQuery", q.message)
        case .database(let e):
            if e.isBusy { return .overloaded() }
            return .internalError("The database reported an error; the request changed nothing.")
        }
    }
}
