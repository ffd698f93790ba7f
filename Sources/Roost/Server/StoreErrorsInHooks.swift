import Hooks
import Store
import StorePostgres

// The store's errors pass through before hooks unchanged (`StoreErrorInHook`):
// a database that went away under a hook answers 503, as it does under a
// plain write, never the hook's 500.
extension StoreError: StoreErrorInHook {}
extension SQLiteError: StoreErrorInHook {}
extension PGError: StoreErrorInHook {}
extension QueryError: StoreErrorInHook {}
