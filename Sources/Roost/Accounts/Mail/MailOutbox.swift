import Daemon
import Foundation
import Jobs
import Logging
import Store
import Webhooks

/// The durable mail outbox: account mails are written in the same
/// transaction as the code they carry (`enqueue`), and one sender thread
/// delivers them by SMTP after the commit. A request never waits for the
/// mail server: a server that is down or slow only delays mail, which
/// stays in `_mail_outbox` and is tried again on the webhook schedule (5 s,
/// 5 min, 30 min, … 10 h) until it is accepted (the row is then removed,
/// code and all) or refused for good (a 5xx reply, or the last attempt:
/// kept as `dead`, its text cleared). A crash between a send and its
/// record sends the message again: at least once.
final class MailOutbox: @unchecked Sendable {
    let settings: AccountSettings
    let templates: MailTemplates
    let schedule = RetrySchedule.standard
    let logger: Logger
    /// The first listen address, for links when `public_url` is unset.
    let fallbackBaseURL: String
    private let loop = OutboxLoop<SMTPSender>(name: "mail", background: true)
    private var running = false

    init(settings: AccountSettings, fallbackBaseURL: String, logger: Logger) throws {
        self.settings = settings
        templates = try MailTemplates(directory: settings.templatesDir)
        self.fallbackBaseURL = fallbackBaseURL
        self.logger = logger
    }

    /// Where links in mails start: `public_url`, or the first listen address.
    var baseURL: String { settings.publicURL.isEmpty ? fallbackBaseURL : settings.publicURL }

    /// Queues `kind` to `recipient` inside the caller's write.
    func enqueue(_ writer: any MailWriting, _ kind: MailTemplates.Kind, to recipient: String, values: [String: String]) throws {
        var all = values
        all["app_name"] = settings.appName
        all["email"] = all["email"] ?? recipient
        all["minutes"] = String(settings.codeLifetime / 60)
        let (subject, text, html) = templates.render(kind, all)
        let message = MailMessage.build(from: settings.smtpFrom, fromName: settings.appName, to: recipient, subject: subject, text: text, html: html)
        try writer.enqueueMail(recipient: recipient, kind: kind.rawValue, message: message, nowMilliseconds: Outbox.nowMilliseconds())
    }

    /// Starts the sender thread (when `smtp_url` is set; else mail waits in the outbox).
    func start(pools: StorePools) throws {
        guard !settings.smtpURL.isEmpty else {
            logger.notice("smtp_url is not set: account mails (verification, password reset) wait in the outbox until it is")
            return
        }
        let sender = SMTPSender(url: settings.smtpURL, username: settings.smtpUsername.isEmpty ? nil : settings.smtpUsername,
                                password: try Self.password(settings), tls: settings.smtpTLS, timeoutMilliseconds: settings.smtpTimeout * 1000)
        running = true
        try loop.start(open: { sender }, pass: { [self] sender in pass(pools: pools, sender: sender) })
    }

    /// The SMTP password: the file `smtp_password_file`, else `ROOST_SMTP_PASSWORD`; never YAML.
    static func password(_ settings: AccountSettings) throws -> String? {
        if !settings.smtpPasswordFile.isEmpty {
            do {
                return try String(contentsOfFile: settings.smtpPasswordFile, encoding: .utf8).trimmingCharacters(in: .newlines)
            } catch {
                throw RoostConfig.Invalid("cannot read smtp_password_file \(settings.smtpPasswordFile): \(error.localizedDescription)")
            }
        }
        return ProcessInfo.processInfo.environment["ROOST_SMTP_PASSWORD"]
    }

    func shutdown() {
        if running { loop.shutdown() }
    }

    /// Looks for due mail now (after a commit that queued some).
    func wake() { loop.wake() }

    private var isStopped: Bool { loop.isStopped }

    /// One look at the outbox: sends what is due; the milliseconds to sleep (0: look again at once).
    private func pass(pools: StorePools, sender: SMTPSender) -> Int64 {
        let batch = 16
        let lease = Int64(settings.smtpTimeout + 10) * 1000 * Int64(batch)
        if let sleep = Self.sleepUntilDue(pools, logger: logger, { try $0.nextMailDue() }) { return sleep }
        let claimed = Self.onWriter(pools) { writer in
            try writer.claimMail(nowMilliseconds: Outbox.nowMilliseconds(), leaseMilliseconds: lease, limit: batch)
        }
        switch claimed {
        case .success(let jobs):
            var records: [MailRecord] = []
            for job in jobs {
                if isStopped { break } // the lease runs out and the next start sends it
                records.append(deliver(job, sender: sender))
            }
            record(records, pools: pools)
            return jobs.isEmpty ? 5 : 0
        case .failure(let error):
            logger.warning("the mail sender cannot read the outbox", metadata: ["error": "\(error)"])
            return 1000
        }
    }

    /// What one delivery attempt came to, recorded with the rest of its batch.
    private struct MailRecord: Sendable {
        let rid: Int64
        let attempt: Int
        let error: String?
        let outcome: MailOutcome
    }

    /// Records a batch's attempts in one writer job (one commit, not one per mail).
    private func record(_ records: [MailRecord], pools: StorePools) {
        guard !records.isEmpty else { return }
        let result = Self.onWriter(pools) { writer in
            for r in records { try writer.recordMail(rid: r.rid, attempt: r.attempt, error: r.error, outcome: r.outcome) }
        }
        if case .failure(let error) = result {
            // The leases run out and the mails are sent again: at least once.
            logger.warning("the mail sender cannot record its deliveries", metadata: ["error": "\(error)", "mails": "\(records.count)"])
        }
    }

    private func deliver(_ job: MailJob, sender: SMTPSender) -> MailRecord {
        let attempt = job.attempts + 1
        var metadata: Logger.Metadata = ["kind": "\(job.kind)", "attempt": "\(attempt)"]
        let outcome: MailOutcome
        let failure = sender.send(from: settings.smtpFrom, to: job.recipient, message: job.message)
        if let failure {
            metadata["error"] = "\(failure.message)"
            metadata["reply"] = "\(failure.reply)"
            if !failure.isPermanent, let delay = schedule.delayMilliseconds(afterAttempt: attempt, retryAfter: nil) {
                outcome = .retry(atMilliseconds: Outbox.nowMilliseconds() + delay)
                logger.info("mail not sent; will retry", metadata: metadata)
                RoostMetrics.mailOutcome("failed").increment()
            } else {
                outcome = .dead
                logger.warning("mail given up", metadata: metadata)
                RoostMetrics.mailOutcome("gave_up").increment()
            }
        } else {
            outcome = .sent
            logger.debug("mail sent", metadata: metadata)
            RoostMetrics.mailOutcome("sent").increment()
        }
        return MailRecord(rid: job.rid, attempt: attempt, error: failure?.message, outcome: outcome)
    }

    /// The milliseconds to sleep before the queue `next` reads has work due
    /// (at most a second: another node may queue some), or nil when some is
    /// due now. Read on a reader, so that an idle queue never takes the writer.
    static func sleepUntilDue(_ pools: StorePools, logger: Logger, _ next: @escaping @Sendable (any DocumentReading) throws -> Int64?) -> Int64? {
        switch pools.onReader(next) {
        case .success(let due?)?:
            let wait = due - Outbox.nowMilliseconds()
            return wait <= 0 ? nil : min(1000, wait)
        case .success(nil)?: return 1000
        case .failure(let error)?:
            logger.warning("a background queue cannot be read", metadata: ["error": "\(error)"])
            return 1000
        case nil: return 50 // the readers' queue is full: again shortly
        }
    }

    /// Runs `operation` in the writer's next group commit and waits for it
    /// (waiting for room when the queue is full).
    static func onWriter<T: Sendable>(_ pools: StorePools, _ operation: @escaping @Sendable (any DocumentWriting) throws -> T) -> Result<T, any Error> {
        let done = DispatchSemaphore(value: 0)
        let box = LockedBox<Result<T, any Error>?>(nil)
        let job = StorePools.WriteJob(operation: operation) { result in
            box.set(result)
            done.signal()
        }
        for _ in 0..<400 {
            if pools.writer.submit(job) {
                done.wait()
                return box.get()!
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return .failure(Overload.writes.error)
    }
}

extension MailOutbox {
    /// The browser link for a code of `purpose`: `<base>/auth/<page>?token=…`.
    func link(_ purpose: AccountCodes.Purpose, _ token: String) -> String {
        "\(baseURL)/auth/\(AccountCodes.page(purpose))?token=\(token)"
    }
}
