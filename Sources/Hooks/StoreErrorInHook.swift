/// An error a before hook did not cause but met in the store it uses: the
/// database busy or gone, a conflict, a document the store refused. The hook
/// registry passes it on unchanged, so the client gets the store's answer
/// (503 with Retry-After for a lost database connection), not `HookFailed`
/// (500). Roost marks the store's error types with it.
public protocol StoreErrorInHook: Error {}
