/// Every metric roostd exports: name and HELP text, declared once here and
/// used by the code that records it.
extension MetricName {
    public static let httpRequests = MetricName(
        "roost_http_requests_total", help: "HTTP requests answered, by method, route template and status.")
    public static let httpRequestDuration = MetricName(
        "roost_http_request_duration_seconds", help: "Time from a request's arrival to its response, by method, route template and status.")
    public static let sqliteSeconds = MetricName(
        "roost_sqlite_seconds", help: "Time spent in SQLite per reader job (op=read) or writer group commit (op=commit).")
    public static let writeCommits = MetricName(
        "roost_write_commits_total", help: "Writer transactions committed (one group commit each).")
    public static let writeOperations = MetricName(
        "roost_write_operations_total", help: "Write operations run by the writer; divided by the commits, the mean group-commit batch.")
    public static let queueDepth = MetricName(
        "roost_queue_depth", help: "Jobs waiting in a worker pool's queue, sampled at scrape time.")
    public static let queueCapacity = MetricName(
        "roost_queue_capacity", help: "Jobs a worker pool's queue holds before requests get 503 Overloaded.")
    public static let workerBusyThreads = MetricName(
        "roost_worker_busy_threads", help: "Threads of a worker pool running a job, sampled at scrape time.")
    public static let workerThreads = MetricName(
        "roost_worker_threads", help: "Threads in a worker pool.")
    public static let thumbnailsGenerated = MetricName(
        "roost_thumbnails_generated_total", help: "Thumbnails made by the thumbnail workers.")
    public static let webhookDeliveries = MetricName(
        "roost_webhook_deliveries_total", help: "Webhook delivery attempts by outcome: delivered, failed (retried later) or gave_up.")
    public static let pushDeliveries = MetricName(
        "roost_push_deliveries_total", help: "Push attempts to APNs and FCM by provider and outcome: delivered, failed (retried later), gave_up or dropped (device gone).")
    public static let pushTokensRemoved = MetricName(
        "roost_push_tokens_removed_total", help: "Push devices removed because their provider disowned the token or it went stale, by reason.")
    public static let pushConnections = MetricName(
        "roost_push_connections_opened_total", help: "HTTP/2 connections the push dispatcher opened to APNs and FCM (streams reuse them).")
    public static let backupsTaken = MetricName(
        "roost_backups_total", help: "Backups taken, by outcome.")
    public static let backupLastSuccess = MetricName(
        "roost_backup_last_success_timestamp_seconds", help: "Unix time the last successful backup finished.")
    public static let backupDuration = MetricName(
        "roost_backup_duration_seconds", help: "How long the last successful backup took.")
    public static let backupSize = MetricName(
        "roost_backup_size_bytes", help: "Size of the last successful backup: its database and every file.")
    public static let liveStreams = MetricName(
        "roost_live_streams", help: "Live (server-sent events) streams open now.")
    public static let liveEventsSent = MetricName(
        "roost_live_events_sent_total", help: "Events handed to live streams' connections.")
    public static let liveSlowDisconnects = MetricName(
        "roost_live_slow_disconnects_total", help: "Live streams closed because their client fell too far behind.")
    public static let liveOverBudget = MetricName(
        "roost_live_over_budget_total", help: "Live streams told to resync (reset, then closed) because matching a change against their query ran past its budget.")
    public static let liveLag = MetricName(
        "roost_live_lag_seconds", help: "Time from a change's commit to its event handed to a live stream's connection.")
    public static let slowLaneReads = MetricName(
        "roost_slow_lane_reads_total", help: "Reads run on the slow lane, by reason: overran (past read_slice_ms on a reader) or address (its client overran lately).")
    public static let sqlitePageCache = MetricName(
        "roost_sqlite_page_cache_bytes", help: "Bytes of SQLite page cache all connections hold, sampled at scrape time (bounded by sqlite_cache_bytes plus a small cache per look-up connection).")
    public static let allocatorAllocated = MetricName(
        "roost_allocator_allocated_bytes", help: "Bytes the daemon has allocated through jemalloc, sampled at scrape time.")
    public static let allocatorResident = MetricName(
        "roost_allocator_resident_bytes", help: "Bytes of memory jemalloc holds resident, freed pages not yet returned included, sampled at scrape time.")

    public static let rateLimited = MetricName(
        "roost_rate_limited_total", help: "Requests refused with 429 RateLimited because their caller's budget (rate_limits) was spent, by class.")

    /// The declarations above, by name: the factory takes each metric's HELP from here.
    static let all: [String: MetricName] = Dictionary(uniqueKeysWithValues: [
        httpRequests, httpRequestDuration, sqliteSeconds, writeCommits, writeOperations, queueDepth, queueCapacity,
        workerBusyThreads, workerThreads, thumbnailsGenerated, webhookDeliveries, pushDeliveries, pushTokensRemoved, pushConnections, backupsTaken, backupLastSuccess,
        backupDuration, backupSize, liveStreams, liveEventsSent, liveSlowDisconnects, liveOverBudget, liveLag,
        slowLaneReads, sqlitePageCache, allocatorAllocated, allocatorResident, rateLimited,
    ].map { ($0.name, $0) })
}
