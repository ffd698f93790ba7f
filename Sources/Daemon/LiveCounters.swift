import Jobs
import Metrics
import Foundation

/// In-memory totals of the metrics `roostd` already records, readable from
/// Swift (the Prometheus registry can only be rendered as text). Installed
/// beside the Prometheus factory by `Telemetry.bootstrap`; the admin
/// console's stats sampler reads `snapshot()` once a second.
///
/// Counters are summed over their dimensions by label; HTTP requests are
/// also split by status class, and their durations go into a log-scale
/// histogram (four buckets per doubling) for percentiles.
public final class LiveCounters: MetricsFactory, @unchecked Sendable {
    public static let shared = LiveCounters()

    /// Totals since start.
    public struct Snapshot: Sendable {
        public var counters: [String: Int64] = [:]
        public var requests: Int64 = 0
        public var clientErrors: Int64 = 0
        public var serverErrors: Int64 = 0
        public var latency = LatencyHistogram()
    }

    // Taken by every request on every loop, for a few instructions: spins before it sleeps.
    private let lock = AdaptiveLock()
    private var state = Snapshot()

    public init() {}

    public func snapshot() -> Snapshot { lock.lock(); defer { lock.unlock() }; return state }

    func add(_ label: String, _ amount: Int64) {
        lock.lock(); state.counters[label, default: 0] += amount; lock.unlock()
    }

    func request(status: Int) {
        lock.lock()
        state.requests += 1
        if status >= 500 { state.serverErrors += 1 } else if status >= 400 { state.clientErrors += 1 }
        lock.unlock()
    }

    func latency(_ nanoseconds: Int64) {
        lock.lock(); state.latency.record(nanoseconds); lock.unlock()
    }

    static let requestsLabel = MetricName.httpRequests.name
    static let durationLabel = MetricName.httpRequestDuration.name

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        if label == Self.requestsLabel {
            let status = Int(dimensions.first { $0.0 == "status" }?.1 ?? "") ?? 0
            return RequestCounter(owner: self, status: status)
        }
        return LabelCounter(owner: self, label: label)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NOOPMetricsHandler.instance
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        label == Self.durationLabel ? RequestTimer(owner: self) : NOOPMetricsHandler.instance
    }

    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}

    private final class LabelCounter: CounterHandler, @unchecked Sendable {
        let owner: LiveCounters
        let label: String
        init(owner: LiveCounters, label: String) { self.owner = owner; self.label = label }
        func increment(by amount: Int64) { owner.add(label, amount) }
        func reset() {}
    }

    private final class RequestCounter: CounterHandler, @unchecked Sendable {
        let owner: LiveCounters
        let status: Int
        init(owner: LiveCounters, status: Int) { self.owner = owner; self.status = status }
        func increment(by amount: Int64) { for _ in 0..<max(0, amount) { owner.request(status: status) } }
        func reset() {}
    }

    private final class RequestTimer: TimerHandler, @unchecked Sendable {
        let owner: LiveCounters
        init(owner: LiveCounters) { self.owner = owner }
        func recordNanoseconds(_ duration: Int64) { owner.latency(duration) }
    }
}

/// Counts of durations in log-scale buckets: bucket `i` holds durations
/// below 2^(i/4) microseconds, so a percentile is within 19 %.
public struct LatencyHistogram: Sendable {
    public static let bucketCount = 112
    public private(set) var counts = [Int64](repeating: 0, count: bucketCount)

    public init() {}

    public static func bucket(_ nanoseconds: Int64) -> Int {
        let micros = Double(max(nanoseconds, 1)) / 1000
        guard micros > 1 else { return 0 }
        return min(bucketCount - 1, Int((log2(micros) * 4).rounded(.up)))
    }

    /// The upper bound of bucket `i`, in milliseconds.
    public static func upperMilliseconds(_ i: Int) -> Double { pow(2, Double(i) / 4) / 1000 }

    public mutating func record(_ nanoseconds: Int64) { counts[Self.bucket(nanoseconds)] += 1 }

    /// The counts recorded since `earlier`.
    public func minus(_ earlier: LatencyHistogram) -> LatencyHistogram {
        var d = LatencyHistogram()
        for i in 0..<Self.bucketCount { d.counts[i] = counts[i] - earlier.counts[i] }
        return d
    }

    /// The `q` quantile (0…1) in milliseconds, or nil when empty.
    public func quantile(_ q: Double) -> Double? {
        let total = counts.reduce(0, +)
        guard total > 0 else { return nil }
        let rank = Int64((Double(total) * q).rounded(.up))
        var seen: Int64 = 0
        for (i, c) in counts.enumerated() {
            seen += c
            if seen >= max(rank, 1) { return Self.upperMilliseconds(i) }
        }
        return Self.upperMilliseconds(Self.bucketCount - 1)
    }
}
