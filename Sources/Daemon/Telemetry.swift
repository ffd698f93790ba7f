import Foundation
import Metrics
import Prometheus

/// swift-metrics with the Prometheus backend. `bootstrap` once per process;
/// `/metrics` renders `registry`. Without bootstrap (unit tests) the metrics
/// API is a no-op.
public enum Telemetry {
    /// Everything `/metrics` shows.
    public static let registry = PrometheusCollectorRegistry()

    /// Request latencies: 0.5 ms … 10 s.
    static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
    ]

    /// Installs the Prometheus factory as swift-metrics' backend.
    public static func bootstrap() {
        let factory = PrometheusHelpFactory(registry: registry, durationBuckets: latencyBuckets)
        // LiveCounters keeps readable totals for the admin console's stats.
        MetricsSystem.bootstrap(MultiplexMetricsHandler(factories: [factory, LiveCounters.shared]))
        // Registered now so they read 0 before anything happens; the file
        // upload and webhook code increment them through these helpers.
        _ = thumbnailsGenerated()
        for reason in slowLaneReasons { _ = slowLaneReads(reason: reason) }
        for outcome in webhookOutcomes { _ = webhookDeliveries(outcome: outcome) }
        _ = backupGauges()
        _ = live()
        for outcome in ["success", "failure"] { _ = backups(outcome: outcome) }
    }

    /// The last successful backup: `roost_backup_last_success_timestamp_seconds`
    /// (Unix time), `roost_backup_duration_seconds` and `roost_backup_size_bytes`.
    public static func backupGauges() -> (lastSuccess: Metrics.Gauge, duration: Metrics.Gauge, size: Metrics.Gauge) {
        (Metrics.Gauge(label: MetricName.backupLastSuccess.name), Metrics.Gauge(label: MetricName.backupDuration.name), Metrics.Gauge(label: MetricName.backupSize.name))
    }

    /// `roost_backups_total{outcome=success|failure}`.
    public static func backups(outcome: String) -> Metrics.Counter {
        Metrics.Counter(label: MetricName.backupsTaken.name, dimensions: [("outcome", outcome)])
    }

    /// Live streams: `roost_live_streams` open now, `roost_live_events_sent_total`,
    /// `roost_live_slow_disconnects_total` (clients dropped for falling behind),
    /// `roost_live_over_budget_total` (streams told to resync because their query
    /// cost too much on a change) and `roost_live_lag_seconds`, from a change's
    /// commit to its event handed to the connection.
    public static func live() -> (streams: Metrics.Gauge, events: Metrics.Counter, slow: Metrics.Counter,
                                  overBudget: Metrics.Counter, lag: Metrics.Timer) {
        (Metrics.Gauge(label: MetricName.liveStreams.name), Metrics.Counter(label: MetricName.liveEventsSent.name),
         Metrics.Counter(label: MetricName.liveSlowDisconnects.name), Metrics.Counter(label: MetricName.liveOverBudget.name),
         Metrics.Timer(label: MetricName.liveLag.name))
    }

    /// Why a read runs on the slow lane: it ran past its slice, or its client did lately.
    public static let slowLaneReasons = ["overran", "address"]

    /// `roost_slow_lane_reads_total{reason=overran|address}`.
    public static func slowLaneReads(reason: String) -> Metrics.Counter {
        Metrics.Counter(label: MetricName.slowLaneReads.name, dimensions: [("reason", reason)])
    }

    /// `roost_rate_limited_total{class=…}`: requests a caller's spent budget refused.
    public static func rateLimited(_ kind: String) -> Metrics.Counter {
        Metrics.Counter(label: MetricName.rateLimited.name, dimensions: [("class", kind)])
    }

    /// `roost_thumbnails_generated_total`.
    public static func thumbnailsGenerated() -> Metrics.Counter {
        Metrics.Counter(label: MetricName.thumbnailsGenerated.name)
    }

    /// `roost_push_deliveries_total{provider=apns|fcm|none, outcome=…}`.
    public static func pushDeliveries(provider: String, outcome: String) -> Metrics.Counter {
        Metrics.Counter(label: MetricName.pushDeliveries.name, dimensions: [("provider", provider), ("outcome", outcome)])
    }

    /// `roost_push_tokens_removed_total{reason=…}`.
    public static func pushTokensRemoved(reason: String) -> Metrics.Counter {
        Metrics.Counter(label: MetricName.pushTokensRemoved.name, dimensions: [("reason", reason)])
    }

    /// `roost_push_connections_opened_total`.
    public static func pushConnections() -> Metrics.Counter {
        Metrics.Counter(label: MetricName.pushConnections.name)
    }

    /// The outcomes `roost_webhook_deliveries_total` is broken down by.
    public static let webhookOutcomes = ["delivered", "failed", "gave_up"]

    /// `roost_webhook_deliveries_total{outcome=…}`.
    public static func webhookDeliveries(outcome: String) -> Metrics.Counter {
        Metrics.Counter(label: MetricName.webhookDeliveries.name, dimensions: [("outcome", outcome)])
    }

    /// `roost_sqlite_seconds{op=…}`: time spent in SQLite per reader job
    /// (`read`) or writer group commit (`commit`).
    public static func sqliteTimer(_ op: String) -> Metrics.Timer {
        Metrics.Timer(label: MetricName.sqliteSeconds.name, dimensions: [("op", op)])
    }

    /// `roost_write_commits_total` and `roost_write_operations_total`: their
    /// ratio is the mean group-commit batch.
    public static func writeCommits() -> (commits: Metrics.Counter, operations: Metrics.Counter) {
        (Metrics.Counter(label: MetricName.writeCommits.name), Metrics.Counter(label: MetricName.writeOperations.name))
    }

    /// The Prometheus text exposition of every metric.
    public static func render() -> [UInt8] { registry.emitToBuffer() }
}

/// Counts and times HTTP requests by method, route template and status:
/// `roost_http_requests_total` and `roost_http_request_duration_seconds`.
/// Handles are cached, so a request costs one locked dictionary look-up.
public final class RequestMetrics: @unchecked Sendable {
    private struct Key: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private let lock = NSLock()
    private var handles: [Key: (Metrics.Counter, Metrics.Timer)] = [:]

    public init() {}

    /// `route` must be a template (`/:collection/:id`), never a raw path.
    public func record(method: String, route: String, status: Int, nanoseconds: UInt64) {
        let key = Key(method: method, route: route, status: status)
        lock.lock()
        let cached = handles[key]
        lock.unlock()
        let (counter, timer) = cached ?? make(key)
        counter.increment()
        timer.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    private func make(_ key: Key) -> (Metrics.Counter, Metrics.Timer) {
        let dimensions = [("method", key.method), ("route", key.route), ("status", String(key.status))]
        let made = (Metrics.Counter(label: MetricName.httpRequests.name, dimensions: dimensions),
                    Metrics.Timer(label: MetricName.httpRequestDuration.name, dimensions: dimensions))
        lock.lock()
        defer { lock.unlock() }
        if let existing = handles[key] { return existing }
        handles[key] = made
        return made
    }
}
