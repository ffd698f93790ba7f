import Daemon
import HTTP
import Metrics
import Store
import StoreSQLite

/// `GET /metrics`: the Prometheus text format. Queue gauges are sampled at
/// scrape time; request, SQLite, thumbnail and webhook metrics are recorded
/// where they happen (see `Telemetry`).
struct MetricsEndpoint: Sendable {
    let pools: StorePools
    private let depth: [Gauge]
    private let capacity: [Gauge]
    private let busy: [Gauge]
    private let threads: [Gauge]
    private let memory = (sqlite: Gauge(label: MetricName.sqlitePageCache.name),
                          allocated: Gauge(label: MetricName.allocatorAllocated.name),
                          resident: Gauge(label: MetricName.allocatorResident.name))

    init(pools: StorePools) {
        self.pools = pools
        let names = ["reader", "writer", "hasher"]
        depth = names.map { Gauge(label: MetricName.queueDepth.name, dimensions: [("queue", $0)]) }
        capacity = names.map { Gauge(label: MetricName.queueCapacity.name, dimensions: [("queue", $0)]) }
        busy = names.map { Gauge(label: MetricName.workerBusyThreads.name, dimensions: [("pool", $0)]) }
        threads = names.map { Gauge(label: MetricName.workerThreads.name, dimensions: [("pool", $0)]) }
    }

    func respond() -> Response {
        let samples = [
            (pools.readers.depth, pools.readers.queue.capacity, pools.readers.busyThreads, pools.readers.threads),
            (pools.writer.depth, pools.writer.queue.capacity, pools.writer.busyThreads, pools.writer.threads),
            (pools.hashers.depth, pools.hashers.queue.capacity, pools.hashers.busyThreads, pools.hashers.threads),
        ]
        for (i, s) in samples.enumerated() {
            depth[i].record(s.0)
            capacity[i].record(s.1)
            busy[i].record(s.2)
            threads[i].record(s.3)
        }
        memory.sqlite.record(SQLiteMemory.pageCacheBytes)
        if let heap = Allocator.stats {
            memory.allocated.record(heap.allocated)
            memory.resident.record(heap.resident)
        }
        return Response(status: 200, headers: Headers([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]),
                        body: Telemetry.render())
    }
}
