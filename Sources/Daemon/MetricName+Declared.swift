/// The daemon's own metrics: name and HELP text, declared once here and used
/// by the code that records them. Roost's areas declare theirs in
/// `Roost/Server/RoostMetrics.swift`.
extension MetricName {
    public static let httpRequests = MetricName(
        "roost_http_requests_total", help: "HTTP requests answered, by method, route template and status.")
    public static let httpRequestDuration = MetricName(
        "roost_http_request_duration_seconds", help: "Time from a request's arrival to its response, by method, route template and status.")
    public static let queueDepth = MetricName(
        "roost_queue_depth", help: "Jobs waiting in a worker pool's queue, sampled at scrape time.")
    public static let queueCapacity = MetricName(
        "roost_queue_capacity", help: "Jobs a worker pool's queue holds before requests get 503 Overloaded.")
    public static let workerBusyThreads = MetricName(
        "roost_worker_busy_threads", help: "Threads of a worker pool running a job, sampled at scrape time.")
    public static let workerThreads = MetricName(
        "roost_worker_threads", help: "Threads in a worker pool.")
    public static let allocatorAllocated = MetricName(
        "roost_allocator_allocated_bytes", help: "Bytes the daemon has allocated through jemalloc, sampled at scrape time.")
    public static let allocatorResident = MetricName(
        "roost_allocator_resident_bytes", help: "Bytes of memory jemalloc holds resident, freed pages not yet returned included, sampled at scrape time.")

    /// The daemon's own declarations and those `declare` added, by name: the
    /// factory takes each metric's HELP from here.
    nonisolated(unsafe) private(set) static var all: [String: MetricName] = Dictionary(uniqueKeysWithValues: [
        httpRequests, httpRequestDuration, queueDepth, queueCapacity, workerBusyThreads, workerThreads,
        allocatorAllocated, allocatorResident,
    ].map { ($0.name, $0) })

    /// Adds an application's metrics (once, at bootstrap, before any metric is made).
    static func declare(_ names: [MetricName]) {
        for name in names { all[name.name] = name }
    }
}
