/// Scheduled jobs' runs (scripts' `roost.every` / `roost.cron`), once per
/// period however many nodes share the database: a row per job with the
/// last period that ran and a lease on the period running now. A node
/// claims a period with one conditional UPDATE (only when the row's last
/// period is older and no other node's lease is live), runs the job, then
/// moves the last period on. A node that dies mid-run leaves its lease to
/// expire; another node then runs that period.
public enum ScheduledRuns {
    /// The table, created at start (`CREATE TABLE IF NOT EXISTS`, so no
    /// migration number: it is the scripts' own bookkeeping).
    public static let tableSQL = """
        CREATE TABLE IF NOT EXISTS _script_jobs (
            job TEXT PRIMARY KEY,
            last_fire BIGINT NOT NULL,
            holder TEXT,
            lease_until BIGINT NOT NULL DEFAULT 0,
            running_fire BIGINT)
        """

    /// Registers a job seen for the first time as having run `previous` (its
    /// latest period before now): a new job waits for its next period.
    public static let insertSQL = "INSERT INTO _script_jobs (job, last_fire) VALUES (?1, ?2) ON CONFLICT (job) DO NOTHING"

    /// Claims period `fire` for `node` until `lease_until`; a row comes back when the claim took.
    public static let claimSQL = """
        UPDATE _script_jobs SET holder = ?2, lease_until = ?3, running_fire = ?4
        WHERE job = ?1 AND last_fire < ?4 AND (lease_until < ?5 OR holder = ?2) RETURNING job
        """

    /// The claimed period ran (or failed: it is not retried; the next period runs).
    public static let finishSQL = """
        UPDATE _script_jobs SET last_fire = running_fire, holder = NULL, lease_until = 0, running_fire = NULL
        WHERE job = ?1 AND holder = ?2 AND running_fire IS NOT NULL
        """
}
