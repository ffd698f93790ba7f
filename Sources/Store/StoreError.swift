import Schema

/// Why a store operation did not happen. Each maps to one HTTP status upstream.
public enum StoreError: Error, Sendable {
    case notFound(String)
    /// The caller must sign in (401).
    case unauthorized(String)
    /// The caller is signed in but may not do this (403).
    case forbidden(String)
    /// A configured access rule refuses the write (403 `AccessRuleDenied`).
    case ruleDenied(String)
    case conflict(String)
    /// A change-feed cursor that can no longer be served (410).
    case expired(String)
    case invalid(String)
    /// The document does not match its collection's JSON Schema (400 `SchemaViolation`).
    case schemaViolation(collection: String, [SchemaViolation])
    case query(QueryError)
    case database(any DatabaseFailure)

    public static func wrap(_ error: any Error) -> StoreError {
        switch error {
        case let e as StoreError: return e
        case let e as QueryError: return .query(e)
        case let e as any DatabaseFailure: return .database(e)
        case let e as AccessScope.Denial:
            switch e {
            case .signInRequired: return .unauthorized("Sign in to use this collection.")
            case .forbidden(let why): return .forbidden(why)
            case .ruleDenied(let why): return .ruleDenied(why)
            }
        default: return .invalid("\(error)")
        }
    }
}
