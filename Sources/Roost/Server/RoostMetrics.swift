import Daemon
import Metrics
import Store

/// The metrics of Roost's areas (the database, backups, webhooks,
/// thumbnails, live streams, the slow lane, rate limits, push): each name with its
/// HELP text declared once here, handed to `Telemetry.bootstrap`, and the
/// handles the areas record through. Those with a fixed set of labels are
/// registered at start (`registerAtStart`), so they read 0 before anything happens.
public enum RoostMetrics {
    /// Every metric declared below, for `Telemetry.bootstrap(declared:)`.
    public static let declared: [MetricName] = [
        .sqliteSeconds, .postgresqlSeconds, .writeCommits, .writeOperations, .thumbnailsGenerated, .webhookDeliveries, .mailDeliveries, .accountJobs,
        .scriptCalls, .scriptSeconds,
        .backupsTaken, .backupLastSuccess, .backupDuration, .backupSize, .liveStreams, .liveEventsSent,
        .liveSlowDisconnects, .liveOverBudget, .liveLag, .slowLaneReads, .loopReads, .sqlitePageCache, .rateLimited,
        .pushDeliveries, .pushTokensRemoved, .pushConnections, .indexBuildsRunning, .indexBuildRows,
    ]

    /// Makes the metrics with fixed labels now, so `/metrics` shows them at 0.
    public static func registerAtStart() {
        _ = thumbnailsGenerated()
        for reason in slowLaneReasons { _ = slowLaneReads(reason: reason) }
        for outcome in ["served", "handed_on"] { _ = Counter(label: MetricName.loopReads.name, dimensions: [("outcome", outcome)]) }
        for outcome in webhookOutcomes { _ = webhookDeliveries(outcome: outcome) }
        for outcome in mailOutcomes { _ = mailOutcome(outcome) }
        for kind in [AccountJobKind.purge, AccountJobKind.appleExchange, AccountJobKind.appleRevoke] {
            for outcome in ["done", "failed", "gave_up"] { _ = accountJob(kind, outcome) }
        }
        _ = backupGauges()
        _ = live()
        _ = indexBuilds()
        for outcome in ["success", "failure"] { _ = backups(outcome: outcome) }
    }

    /// The last successful backup: `roost_backup_last_success_timestamp_seconds`
    /// (Unix time), `roost_backup_duration_seconds` and `roost_backup_size_bytes`.
    static func backupGauges() -> (lastSuccess: Gauge, duration: Gauge, size: Gauge) {
        (Gauge(label: MetricName.backupLastSuccess.name), Gauge(label: MetricName.backupDuration.name), Gauge(label: MetricName.backupSize.name))
    }

    /// `roost_backups_total{outcome=success|failure}`.
    static func backups(outcome: String) -> Counter {
        Counter(label: MetricName.backupsTaken.name, dimensions: [("outcome", outcome)])
    }

    /// Live streams: `roost_live_streams` open now, `roost_live_events_sent_total`,
    /// `roost_live_slow_disconnects_total` (clients dropped for falling behind),
    /// `roost_live_over_budget_total` (streams told to resync because their query
    /// cost too much on a change) and `roost_live_lag_seconds`, from a change's
    /// commit to its event handed to the connection.
    static func live() -> (streams: Gauge, events: Counter, slow: Counter, overBudget: Counter, lag: Metrics.Timer) {
        (Gauge(label: MetricName.liveStreams.name), Counter(label: MetricName.liveEventsSent.name),
         Counter(label: MetricName.liveSlowDisconnects.name), Counter(label: MetricName.liveOverBudget.name),
         Metrics.Timer(label: MetricName.liveLag.name))
    }

    /// Why a read runs on the slow lane: it ran past its slice, or its client did lately.
    static let slowLaneReasons = ["overran", "address"]

    /// `roost_slow_lane_reads_total{reason=overran|address}`.
    static func slowLaneReads(reason: String) -> Counter {
        Counter(label: MetricName.slowLaneReads.name, dimensions: [("reason", reason)])
    }

    /// `roost_rate_limited_total{class=…}`: requests a caller's spent budget refused.
    static func rateLimited(_ kind: String) -> Counter {
        Counter(label: MetricName.rateLimited.name, dimensions: [("class", kind)])
    }

    /// `roost_thumbnails_generated_total`.
    static func thumbnailsGenerated() -> Counter {
        Counter(label: MetricName.thumbnailsGenerated.name)
    }

    /// The providers and outcomes `roost_push_deliveries_total` is broken down by.
    static let pushProviders = ["apns", "fcm", "none"]
    static let pushOutcomes = ["delivered", "failed", "gave_up", "dropped"]

    /// `roost_push_deliveries_total{provider=apns|fcm|none, outcome=…}`.
    static func pushDeliveries(provider: String, outcome: String) -> Counter {
        Counter(label: MetricName.pushDeliveries.name, dimensions: [("provider", provider), ("outcome", outcome)])
    }

    /// `roost_push_tokens_removed_total{reason=…}`.
    static func pushTokensRemoved(reason: String) -> Counter {
        Counter(label: MetricName.pushTokensRemoved.name, dimensions: [("reason", reason)])
    }

    /// `roost_push_connections_opened_total`.
    static func pushConnections() -> Counter {
        Counter(label: MetricName.pushConnections.name)
    }

    /// The outcomes `roost_webhook_deliveries_total` is broken down by.
    static let webhookOutcomes = ["delivered", "failed", "gave_up"]

    /// `roost_webhook_deliveries_total{outcome=…}`.
    static func webhookDeliveries(outcome: String) -> Counter {
        Counter(label: MetricName.webhookDeliveries.name, dimensions: [("outcome", outcome)])
    }

    /// The outcomes `roost_mail_deliveries_total` is broken down by.
    static let mailOutcomes = ["sent", "failed", "gave_up"]

    /// `roost_mail_deliveries_total{outcome=…}`.
    static func mailOutcome(_ outcome: String) -> Counter {
        Counter(label: MetricName.mailDeliveries.name, dimensions: [("outcome", outcome)])
    }

    /// `roost_account_jobs_total{kind=…,outcome=…}`.
    static func accountJob(_ kind: String, _ outcome: String) -> Counter {
        Counter(label: MetricName.accountJobs.name, dimensions: [("kind", kind), ("outcome", outcome)])
    }

    /// `roost_script_calls_total{kind=…,outcome=…}`.
    static func scriptCalls(kind: String, outcome: String) -> Counter {
        Counter(label: MetricName.scriptCalls.name, dimensions: [("kind", kind), ("outcome", outcome)])
    }

    /// `roost_script_seconds{kind=…}`.
    static func scriptTimer(kind: String) -> Metrics.Timer {
        Metrics.Timer(label: MetricName.scriptSeconds.name, dimensions: [("kind", kind)])
    }

    /// Time spent in the database per reader job (`read`) or writer group
    /// commit (`commit`): `roost_sqlite_seconds` or `roost_postgresql_seconds`,
    /// by the engine's name.
    static func databaseTimer(engine: String, _ op: String) -> Metrics.Timer {
        Metrics.Timer(label: (engine == "postgresql" ? MetricName.postgresqlSeconds : MetricName.sqliteSeconds).name, dimensions: [("op", op)])
    }

    /// `roost_write_commits_total` and `roost_write_operations_total`: their
    /// ratio is the mean group-commit batch.
    static func writeCommits() -> (commits: Counter, operations: Counter) {
        (Counter(label: MetricName.writeCommits.name), Counter(label: MetricName.writeOperations.name))
    }

    /// Background index builds: how many run, and the documents they filled.
    static func indexBuilds() -> (running: Gauge, rows: Counter) {
        (Gauge(label: MetricName.indexBuildsRunning.name), Counter(label: MetricName.indexBuildRows.name))
    }
}

/// Roost's metric names and HELP texts.
extension MetricName {
    static let sqliteSeconds = MetricName(
        "roost_sqlite_seconds", help: "Time spent in SQLite per reader job (op=read) or writer group commit (op=commit).")
    static let postgresqlSeconds = MetricName(
        "roost_postgresql_seconds", help: "Time spent on PostgreSQL per reader job (op=read) or writer group commit (op=commit).")
    static let writeCommits = MetricName(
        "roost_write_commits_total", help: "Writer transactions committed (one group commit each).")
    static let writeOperations = MetricName(
        "roost_write_operations_total", help: "Write operations run by the writer; divided by the commits, the mean group-commit batch.")
    static let thumbnailsGenerated = MetricName(
        "roost_thumbnails_generated_total", help: "Thumbnails made by the thumbnail workers.")
    static let webhookDeliveries = MetricName(
        "roost_webhook_deliveries_total", help: "Webhook delivery attempts by outcome: delivered, failed (retried later) or gave_up.")
    static let mailDeliveries = MetricName(
        "roost_mail_deliveries_total", help: "Account mail (verification, reset, email change) SMTP attempts by outcome: sent, failed (retried later) or gave_up.")
    static let accountJobs = MetricName(
        "roost_account_jobs_total", help: "Work account deletions and Apple sign-ins leave for later, by kind (purge, apple_exchange, apple_revoke) and outcome: done, failed (retried later) or gave_up.")
    static let scriptCalls = MetricName(
        "roost_script_calls_total", help: "Calls of Lua script handlers, by kind (before, after, route, every, cron) and outcome (ok, refused, error, timeout).")
    static let scriptSeconds = MetricName(
        "roost_script_seconds", help: "Time Lua script handlers ran, by kind (before, after, route, every, cron).")
    static let pushDeliveries = MetricName(
        "roost_push_deliveries_total", help: "Push attempts to APNs and FCM by provider and outcome: delivered, failed (retried later), gave_up or dropped (device gone).")
    static let pushTokensRemoved = MetricName(
        "roost_push_tokens_removed_total", help: "Push devices removed because their provider disowned the token or it went stale, by reason.")
    static let pushConnections = MetricName(
        "roost_push_connections_opened_total", help: "HTTP/2 connections the push dispatcher opened to APNs and FCM (streams reuse them).")
    static let indexBuildsRunning = MetricName(
        "roost_index_builds_running", help: "Indexes being built or dropped in the background (collections set up at run time).")
    static let indexBuildRows = MetricName(
        "roost_index_build_rows_total", help: "Documents whose entries background index builds have written.")


    static let backupsTaken = MetricName(
        "roost_backups_total", help: "Backups taken, by outcome.")
    static let backupLastSuccess = MetricName(
        "roost_backup_last_success_timestamp_seconds", help: "Unix time the last successful backup finished.")
    static let backupDuration = MetricName(
        "roost_backup_duration_seconds", help: "How long the last successful backup took.")
    static let backupSize = MetricName(
        "roost_backup_size_bytes", help: "Size of the last successful backup: its database and every file.")
    static let liveStreams = MetricName(
        "roost_live_streams", help: "Live (server-sent events) streams open now.")
    static let liveEventsSent = MetricName(
        "roost_live_events_sent_total", help: "Events handed to live streams' connections.")
    static let liveSlowDisconnects = MetricName(
        "roost_live_slow_disconnects_total", help: "Live streams closed because their client fell too far behind.")
    static let liveOverBudget = MetricName(
        "roost_live_over_budget_total", help: "Live streams told to resync (reset, then closed) because matching a change against their query ran past its budget.")
    static let liveLag = MetricName(
        "roost_live_lag_seconds", help: "Time from a change's commit to its event handed to a live stream's connection.")
    static let slowLaneReads = MetricName(
        "roost_slow_lane_reads_total", help: "Reads run on the slow lane, by reason: overran (past read_slice_ms on a reader) or address (its client overran lately).")
    static let loopReads = MetricName(
        "roost_loop_reads_total", help: "Short reads (GET by id) an event loop began itself (loop_reads), by outcome: served, or handed_on to the readers after a database error.")
    static let sqlitePageCache = MetricName(
        "roost_sqlite_page_cache_bytes", help: "Bytes of SQLite page cache all connections hold, sampled at scrape time (bounded by sqlite_cache_bytes plus a small cache per look-up connection).")
    static let rateLimited = MetricName(
        "roost_rate_limited_total", help: "Requests refused with 429 RateLimited because their caller's budget (rate_limits) was spent, by class.")
}
