/// Scheduled jobs' runs (`ScheduledRuns`): one node runs each period.
public protocol ScheduledRunsWriting: AnyObject {
    /// Creates their table; at start, outside `commitBatch`.
    func prepareScheduledRuns() throws
    /// Claims period `fire` of `job` for `node`; false when it ran already or another node holds it.
    func claimScheduledRun(job: String, fire: Int64, previous: Int64, node: String, now: Int64, leaseUntil: Int64) throws -> Bool
    /// Marks the claimed period as run.
    func finishScheduledRun(job: String, node: String) throws
}
