import Foundation
import JSON
import Store
@testable import StorePostgres

/// A value moved to another thread that the sender no longer uses meanwhile.
final class HandOver<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// The schedule of the feed's gap tests: `first` inserts A into `c` and is
/// held just before COMMIT, after it wrote its change row; `second` (another
/// node's writer) inserts B meanwhile, given 1.5 s; `observe` runs while A is
/// still open, then A commits and `observe` runs twice more.
/// - Returns: whether B committed while A was open (with the feed lock it waits).
func raceLateCommit(first: PostgresDocumentWriter, second: PostgresDocumentWriter, observe: () throws -> Void) throws -> Bool {
    let aHolding = DispatchSemaphore(value: 0), releaseA = DispatchSemaphore(value: 0), aDone = DispatchSemaphore(value: 0)
    first.beforeCommit = { aHolding.signal(); releaseA.wait() }
    // Each writer is used by one thread at a time: handed over, not shared.
    let writerA = HandOver(first)
    let threadA = Thread {
        _ = writerA.value.commitBatch([{ w in try w.insert(into: "c", object(#"{"_id":"A"}"#)) }])
        aDone.signal()
    }
    threadA.start()
    aHolding.wait()
    first.beforeCommit = nil

    // B starts while A holds its position uncommitted.
    let bDone = DispatchSemaphore(value: 0)
    let writerB = HandOver(second)
    let threadB = Thread {
        _ = writerB.value.commitBatch([{ w in try w.insert(into: "c", object(#"{"_id":"B"}"#)) }])
        bDone.signal()
    }
    threadB.start()
    // With the lock, B waits for A; without it, B commits now. Either way, give it time.
    let bCommitted = bDone.wait(timeout: .now() + 1.5) == .success
    try observe()
    releaseA.signal()
    aDone.wait()
    if !bCommitted { bDone.wait() }
    try observe()
    try observe()
    return bCommitted
}
