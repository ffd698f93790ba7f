import Foundation
import JSON
import Jobs
import Logging
import Store
import Webhooks

/// The thread that runs what account deletions and Apple sign-ins leave in
/// `_account_jobs`, after their answers and across restarts:
///
/// - `purge`: the deleted user's documents and files, by each collection's
///   `on_user_delete` (`AccountPurge`), with the policies current when it runs;
/// - `apple_exchange`: an Apple authorization code exchanged for the refresh
///   token kept with the identity (`AppleTokens`);
/// - `apple_revoke`: that refresh token revoked at Apple.
///
/// A job is claimed under a lease (10 minutes), so one a crash interrupted
/// runs again; a purge is idempotent (it looks for what the user still
/// owns). A failed job is retried on the webhook schedule (5 s, 5 min,
/// 30 min, … 10 h); after the last attempt, or a refusal that retrying
/// cannot change, it is logged and counted (`roost_account_jobs_total`) and dropped.
final class AccountJobs: @unchecked Sendable {
    let pools: StorePools
    let purge: AccountPurge
    let apple: AppleTokens?
    let settings: ReloadableSettings
    let logger: Logger
    let schedule = RetrySchedule.standard
    static let lease: Int64 = 600_000
    private let loop = OutboxLoop<Void>(name: "account-jobs", background: true)
    private var running = false

    init(pools: StorePools, purge: AccountPurge, apple: AppleTokens?, settings: ReloadableSettings, logger: Logger) {
        self.pools = pools
        self.purge = purge
        self.apple = apple
        self.settings = settings
        self.logger = logger
    }

    func start() {
        running = true
        try? loop.start(open: {}, pass: { [self] _ in pass() })  // opening nothing cannot fail
    }

    func shutdown() {
        if running { loop.shutdown() }
    }

    /// Looks for due jobs now (after a commit that queued some).
    func wake() { loop.wake() }

    private var isStopped: Bool { loop.isStopped }

    /// Each collection's `on_user_delete` (the config's and those set up at run time), `keep` left out.
    var policies: [String: RoostConfig.UserDeletePolicy] {
        settings.collections.compactMapValues { $0.onUserDelete == .keep ? nil : $0.onUserDelete }
    }

    /// One look at the queue: performs what is due; the milliseconds to sleep (0: look again at once).
    private func pass() -> Int64 {
        if let sleep = MailOutbox.sleepUntilDue(pools, logger: logger, { try $0.nextAccountJobDue() }) { return sleep }
        let claimed = MailOutbox.onWriter(pools) { writer in
            try writer.claimAccountJobs(nowMilliseconds: Outbox.nowMilliseconds(), leaseMilliseconds: Self.lease, limit: 4)
        }
        switch claimed {
        case .success(let jobs):
            for job in jobs where !isStopped { perform(job) }
            return jobs.isEmpty ? 5 : 0
        case .failure(let error):
            logger.warning("the account jobs cannot be read", metadata: ["error": "\(error)"])
            return 1000
        }
    }

    /// What a job's attempt came to.
    enum Verdict {
        case done
        /// Worth another try later.
        case failed(String)
        /// Retrying cannot help (a refusal, an unusable job).
        case refused(String)
        /// Cut short by the shutdown: due again at once, the attempt not counted.
        case interrupted
    }

    private func perform(_ job: AccountJobRecord) {
        let verdict: Verdict
        switch job.kind {
        case AccountJobKind.purge:
            verdict = runPurge(job)
        case AccountJobKind.appleExchange, AccountJobKind.appleRevoke:
            if let apple {
                verdict = job.kind == AccountJobKind.appleRevoke ? apple.revoke(job) : apple.exchange(job, pools: pools)
            } else {
                verdict = .failed("Sign in with Apple's token settings (oidc_providers.apple.team_id, key_id, private_key_file) are not set")
            }
        default:
            verdict = .refused("unknown job kind \(job.kind)")
        }
        var attempt = job.attempts + 1
        var retryAt: Int64? = nil
        var error: String? = nil
        var metadata: Logger.Metadata = ["kind": "\(job.kind)", "user": "\(job.userID)", "attempt": "\(attempt)"]
        switch verdict {
        case .done:
            RoostMetrics.accountJob(job.kind, "done").increment()
        case .failed(let why):
            error = why
            metadata["error"] = "\(why)"
            if let delay = schedule.delayMilliseconds(afterAttempt: attempt, retryAfter: nil) {
                retryAt = Outbox.nowMilliseconds() + delay
                logger.info("account job failed; will retry", metadata: metadata)
                RoostMetrics.accountJob(job.kind, "failed").increment()
            } else {
                logger.error("account job given up", metadata: metadata)
                RoostMetrics.accountJob(job.kind, "gave_up").increment()
            }
        case .refused(let why):
            metadata["error"] = "\(why)"
            logger.error("account job given up", metadata: metadata)
            RoostMetrics.accountJob(job.kind, "gave_up").increment()
        case .interrupted:
            attempt = job.attempts
            retryAt = Outbox.nowMilliseconds()
            logger.info("account job interrupted by the shutdown; it goes on at the next start", metadata: metadata)
        }
        let (id, due, why, attempts) = (job.id, retryAt, error, attempt)
        if case .failure(let failure) = MailOutbox.onWriter(pools, { try $0.finishAccountJob(id: id, attempts: attempts, retryAt: due, error: why) }) {
            logger.warning("account job not recorded; it runs again when its lease ends", metadata: ["error": "\(failure)"])
        }
    }

    private func runPurge(_ job: AccountJobRecord) -> Verdict {
        let started = Date()
        do {
            // A long purge renews its lease every minute, so no other node takes the job meanwhile.
            let renewed = LockedBox(DispatchTime.now().uptimeNanoseconds)
            let (pools, id, attempts) = (self.pools, job.id, job.attempts)
            let outcome = try purge.run(userID: job.userID, policies: policies, going: { [self] in
                if DispatchTime.now().uptimeNanoseconds - renewed.get() > 60_000_000_000 {
                    renewed.set(DispatchTime.now().uptimeNanoseconds)
                    _ = MailOutbox.onWriter(pools) {
                        try $0.finishAccountJob(id: id, attempts: attempts, retryAt: Outbox.nowMilliseconds() + Self.lease, error: nil)
                    }
                }
                return !isStopped
            })
            if isStopped { return .interrupted }
            var metadata: Logger.Metadata = ["user": "\(job.userID)", "deleted": "\(outcome.deleted)", "anonymised": "\(outcome.anonymised)",
                                             "seconds": "\(String(format: "%.1f", Date().timeIntervalSince(started)))"]
            if outcome.kept > 0 {
                metadata["kept"] = "\(outcome.kept)"
                metadata["reason"] = "\(outcome.reason ?? "")"
            }
            if outcome.deleted + outcome.anonymised + outcome.kept > 0 {
                logger.notice("deleted account's data handled", metadata: metadata)
            } else {
                logger.debug("deleted account's data handled", metadata: metadata)
            }
            return .done
        } catch {
            return .failed("\(error)")
        }
    }
}
