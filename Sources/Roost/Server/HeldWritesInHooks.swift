import Hooks
import StorePostgres

// Creates the PostgreSQL writer held for earlier writes of a batch go out
// with the next statement, often a hook's: that time is not the hook's
// (`WorkOnOthersBehalf`), so no write overruns its hook budget for them.
extension PostgresDocumentWriter: WorkOnOthersBehalf {
    public var timeOnOthersBehalf: Duration { heldSendingTime }
}
