import Foundation
import Jobs
import Metrics
import Prometheus

/// swift-metrics with the Prometheus backend. `bootstrap` once per process;
/// `/metrics` renders `registry`. Without bootstrap (unit tests) the metrics
/// API is a no-op. The daemon's own metrics (HTTP requests, worker pools,
/// the allocator) are declared here; an application's areas declare theirs
/// (`Roost/Server/RoostMetrics.swift`) and pass them to `bootstrap`.
public enum Telemetry {
    /// Everything `/metrics` shows.
    public static let registry = PrometheusCollectorRegistry()

    /// Request latencies: 0.5 ms … 10 s.
    static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
    ]

    /// Installs the Prometheus factory as swift-metrics' backend, with the
    /// HELP text of the daemon's own metrics and of `declared`, the metrics
    /// of the application that runs on it (Roost declares its areas').
    public static func bootstrap(declared: [MetricName] = []) {
        MetricName.declare(declared)
        let factory = PrometheusHelpFactory(registry: registry, durationBuckets: latencyBuckets)
        // LiveCounters keeps readable totals for the admin console's stats.
        MetricsSystem.bootstrap(MultiplexMetricsHandler(factories: [factory, LiveCounters.shared]))
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

    // Taken by every request on every loop, for one look-up: spins before it sleeps.
    private let lock = AdaptiveLock()
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
