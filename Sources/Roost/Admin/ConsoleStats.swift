import Daemon
import Foundation
import Jobs
import JSON
import Logging
import Store

/// The admin console's live numbers: once a second a `stats` thread turns
/// the daemon's in-memory counters (`LiveCounters`: requests, latencies,
/// errors, group commits) and queue depths into one sample, and keeps the
/// last five minutes. Nothing here runs on an event loop; the one SQL
/// statement (the webhook backlog, an index count) is queued on a reader
/// each second, and a sample shows the latest count (no connection of its own).
final class ConsoleStats: @unchecked Sendable {
    static let keep = 300

    let pools: StorePools
    let files: FileHandlers
    let logger: Logger
    /// Open live streams (the LiveHub's count).
    let liveStreams: @Sendable () -> Int
    private let condition = NSCondition()
    private var stopped = false
    private var history: [(t: Int64, sample: JSONObject)] = []
    /// The webhook backlog as a reader last counted it (nil: not yet, or it failed).
    private let webhookBacklog = LockedBox<Int?>(nil)

    init(pools: StorePools, files: FileHandlers, liveStreams: @escaping @Sendable () -> Int, logger: Logger) {
        self.liveStreams = liveStreams
        self.pools = pools
        self.files = files
        self.logger = logger
    }

    func start() {
        NamedThread.start("stats") { [self] in run() }
    }

    func stop() {
        condition.lock(); stopped = true; condition.signal(); condition.unlock()
    }

    /// Samples taken after `after` (Unix ms), oldest first, as a JSON object.
    func json(after: Int64) -> String {
        condition.lock()
        let samples = history.filter { $0.t > after }.map(\.sample)
        condition.unlock()
        var o = JSONObject()
        o["now"] = .int(Self.nowMilliseconds())
        o["intervalMs"] = .int(1000)
        o["samples"] = .array(samples.map { .object($0) })
        return o.jsonText
    }

    private func run() {
        var previous = LiveCounters.shared.snapshot()
        var previousTime = DispatchTime.now().uptimeNanoseconds
        while true {
            condition.lock()
            if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: 1)) }
            let done = stopped
            condition.unlock()
            if done { return }
            let now = LiveCounters.shared.snapshot(), time = DispatchTime.now().uptimeNanoseconds
            let sample = self.sample(now, previous, seconds: max(Double(time - previousTime) / 1e9, 0.001))
            countWebhookBacklog()
            previous = now
            previousTime = time
            condition.lock()
            history.append((Self.time(of: sample), sample))
            if history.count > Self.keep { history.removeFirst(history.count - Self.keep) }
            condition.unlock()
        }
    }

    /// Queues the backlog count on a reader (skipped when the queue is full).
    private func countWebhookBacklog() {
        let backlog = webhookBacklog
        _ = pools.readers.submit { reader in backlog.set(try? reader.pendingDeliveryCount()) }
    }

    private func sample(_ now: LiveCounters.Snapshot, _ before: LiveCounters.Snapshot, seconds: Double) -> JSONObject {
        func rate(_ a: Int64, _ b: Int64) -> JSONValue { .double(((Double(a - b) / seconds) * 10).rounded() / 10) }
        func delta(_ label: String) -> Int64 { (now.counters[label] ?? 0) - (before.counters[label] ?? 0) }
        let latency = now.latency.minus(before.latency)
        let commits = delta("roost_write_commits_total"), operations = delta("roost_write_operations_total")
        var o = JSONObject()
        o["t"] = .int(Self.nowMilliseconds())
        o["requestsPerSecond"] = rate(now.requests, before.requests)
        o["p50Ms"] = latency.quantile(0.5).map { .double($0) } ?? .null
        o["p99Ms"] = latency.quantile(0.99).map { .double($0) } ?? .null
        o["serverErrorsPerSecond"] = rate(now.serverErrors, before.serverErrors)
        o["clientErrorsPerSecond"] = rate(now.clientErrors, before.clientErrors)
        o["readerQueue"] = .int(Int64(pools.readers.depth))
        o["writerQueue"] = .int(Int64(pools.writer.depth))
        o["hasherQueue"] = .int(Int64(pools.hashers.depth))
        o["uploadQueue"] = .int(Int64(files.uploads.depth))
        o["commitsPerSecond"] = rate(commits, 0)
        o["groupCommitBatch"] = commits > 0 ? .double((Double(operations) / Double(commits) * 10).rounded() / 10) : .null
        o["thumbnailBacklog"] = .int(Int64(files.thumbnails.pool.depth + files.thumbnails.pool.busyThreads))
        o["webhookBacklog"] = webhookBacklog.get().map { .int(Int64($0)) } ?? .null
        o["liveStreams"] = .int(Int64(liveStreams()))
        o["rssBytes"] = Self.residentBytes().map { .int($0) } ?? .null
        return o
    }

    static func time(of sample: JSONObject) -> Int64 {
        if case .int(let t) = sample["t"] ?? .null { return t }
        return 0
    }

    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Resident memory from `/proc/self/statm` (pages × page size).
    static func residentBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
