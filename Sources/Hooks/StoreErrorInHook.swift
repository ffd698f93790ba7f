/// An error a before hook met in the store it uses. When the store itself
/// failed (`isStoreFailure`: the database busy, gone or out of resources),
/// the hook registry passes the error on unchanged, so the client gets the
/// store's answer (503 with Retry-After for a lost database connection),
/// not `HookFailed` (500). Anything else the hook threw, including a store
/// error about a document, stays the hook's failure: its text never
/// reaches the client. Roost marks the store's error types with it.
public protocol StoreErrorInHook: Error {
    var isStoreFailure: Bool { get }
}
