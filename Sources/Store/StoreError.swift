/// Why a store operation did not happen. Each maps to one HTTP status upstream.
public enum StoreError: Error, Sendable {
    case notFound(String)
    case conflict(String)
    case invalid(String)
    case query(QueryError)
    case database(SQLiteError)

    public static func wrap(_ error: any Error) -> StoreError {
        switch error {
        case let e as StoreError: return e
        case let e as QueryError: return .query(e)
        case let e as SQLiteError: return .database(e)
        default: return .invalid("\(error)")
        }
    }
}
