import Hooks
import Store
import StoreSQLite
import StorePostgres

// A database that failed under a before hook (busy or gone, short of
// resources, past its time limit) answers as it would under a plain write
// (503), never as the hook's 500 (`StoreErrorInHook`). Any other store
// error a hook meets (a taken id, a value too large) stays the hook's
// failure: it may be about a collection the caller cannot see.
extension DatabaseFailure {
    var failedItself: Bool { isBusy || isOutOfResources || isInterrupted }
}

extension StoreError: StoreErrorInHook {
    public var isStoreFailure: Bool { if case .database(let e) = self { e.failedItself } else { false } }
}

extension SQLiteError: StoreErrorInHook {
    public var isStoreFailure: Bool { failedItself }
}

extension PGError: StoreErrorInHook {
    public var isStoreFailure: Bool { failedItself }
}
