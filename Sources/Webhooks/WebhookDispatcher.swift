import Foundation
import Jobs
import Logging
import Store
import Timing

/// Delivers the outbox: one scheduler thread finds due deliveries on its own
/// read connection and hands them to a pool of delivery threads, which POST
/// (libcurl, with a timeout), sign each attempt, and record the outcome
/// through `record` (the single writer). Nothing here runs on an event loop.
///
/// At-least-once: a delivery leaves the queue only when its success is
/// committed, so a crash between the POST and the commit sends it again,
/// with the same `webhook-id`.
public final class WebhookDispatcher: @unchecked Sendable {
    public struct Settings: Sendable {
        public var schedule = RetrySchedule.standard
        public var timeoutMilliseconds = 15_000
        public var workers = 2
        /// The longest the scheduler sleeps without being woken.
        public var pollMilliseconds = 1_000
        public init() {}
    }

    /// Runs a write in the writer's next group commit, then calls `done` (committed or not).
    public typealias Record = @Sendable (_ write: @escaping @Sendable (any WebhooksWriting) throws -> Void, _ done: @escaping @Sendable () -> Void) -> Void

    let engine: any StoreEngine
    let settings: Settings
    let record: Record
    let onOutcome: @Sendable (String) -> Void
    let logger: Logger
    let pool: WorkerPool<Void, DueDelivery>
    private let loop = OutboxLoop<any DocumentReading>(name: "webhook-sched")
    /// Deliveries handed to the pool and not finished: not handed again meanwhile (guarded by `inFlightLock`).
    private var inFlight: Set<Int64> = []
    private let inFlightLock = NSLock()

    /// - Parameter onOutcome: called with `delivered`, `failed` (will retry) or `gave_up` per attempt.
    public init(engine: any StoreEngine, settings: Settings, record: @escaping Record,
                onOutcome: @escaping @Sendable (String) -> Void, logger: Logger) {
        self.engine = engine
        self.settings = settings
        self.record = record
        self.onOutcome = onOutcome
        self.logger = logger
        let box = LockedBox<WebhookDispatcher?>(nil)
        pool = WorkerPool(name: "webhook", threads: settings.workers, capacity: 1024, logger: logger,
                          makeContext: {}, run: { _, jobs in for job in jobs { box.get()?.deliver(job) } })
        box.set(self)
    }

    public func start() throws {
        try pool.start()
        // The scheduler's read connection is opened on its own thread and stays there.
        try loop.start(open: { [engine] in try engine.openReader(role: "webhooks") }, pass: { [self] in schedule($0) })
    }

    /// Stops scheduling; deliveries not yet started stay in the outbox for the next start.
    public func shutdown() {
        loop.shutdown()
        pool.shutdown()
    }

    /// Looks for due deliveries now (after a commit that added some).
    public func wake() { loop.wake() }

    var isStopped: Bool { loop.isStopped }

    /// Hands due deliveries not in flight to the pool; returns the milliseconds until the next is due.
    private func schedule(_ reader: any WebhooksReading) -> Int64 {
        let busy = inFlightLock.withLock { inFlight }
        var waitMilliseconds = Int64(settings.pollMilliseconds)
        do {
            let now = Outbox.nowMilliseconds()
            for delivery in try reader.dueDeliveries(now: now, limit: 256) where !busy.contains(delivery.rid) {
                inFlightLock.withLock { _ = inFlight.insert(delivery.rid) }
                if !pool.submit(delivery) {
                    inFlightLock.withLock { _ = inFlight.remove(delivery.rid) }
                    break
                }
            }
            if let next = try reader.nextDeliveryDue(), next > now { waitMilliseconds = min(waitMilliseconds, next - now) }
        } catch {
            logger.error("webhook scheduler cannot read the outbox", metadata: ["error": "\(error)"])
        }
        return max(waitMilliseconds, 5)
    }

    private func finish(_ rid: Int64) {
        inFlightLock.withLock { _ = inFlight.remove(rid) }
        loop.wake()
    }

    /// One attempt of one delivery, on a delivery thread.
    func deliver(_ d: DueDelivery) {
        if isStopped { return finish(d.rid) }
        let attempt = d.attempts + 1
        let metadata: Logger.Metadata = ["webhook_id": "msg_\(d.eventID)", "endpoint": "\(d.endpoint.name)", "event": "\(d.type)",
                                         "attempt": "\(attempt)"]
        guard let body = WebhookPayload.body(format: d.endpoint.format, type: d.type, timestamp: d.createdAt, data: d.data) else {
            save(d, attempt: attempt, status: nil, error: "nothing to send (no device tokens for this format)", milliseconds: 0, outcome: .delivered)
            return
        }
        guard let key = WebhookSigner.key(of: d.endpoint.secret) else {
            logger.error("webhook endpoint has an invalid secret", metadata: metadata)
            onOutcome("gave_up")
            save(d, attempt: attempt, status: nil, error: "invalid endpoint secret", milliseconds: 0, outcome: .dead)
            return
        }
        let id = "msg_" + d.eventID
        let timestamp = Int64(Date().timeIntervalSince1970)
        let headers = [("Content-Type", "application/json"), ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                       ("webhook-signature", WebhookSigner.signature(id: id, timestamp: timestamp, body: body, key: key))]
        let started = ContinuousClock.now
        let result = HTTPPoster.post(url: d.endpoint.url, headers: headers, body: body, timeoutMilliseconds: settings.timeoutMilliseconds)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Int(elapsed.wholeMilliseconds)
        let error = result.error ?? result.status.flatMap { (200..<300).contains($0) ? nil : "HTTP \($0)" }

        if let status = result.status, (200..<300).contains(status) {
            onOutcome("delivered")
            logger.debug("webhook delivered", metadata: metadata)
            save(d, attempt: attempt, status: status, error: nil, milliseconds: milliseconds, outcome: .delivered)
        } else if result.status == 410 {
            onOutcome("gave_up")
            logger.warning("webhook endpoint answered 410 Gone; disabling it", metadata: metadata)
            let name = d.endpoint.name
            save(d, attempt: attempt, status: 410, error: "410 Gone: endpoint disabled", milliseconds: milliseconds, outcome: .dead) { writer in
                _ = try writer.setWebhookEndpointDisabled(name: name, reason: "410 Gone")
            }
        } else if let delay = settings.schedule.delayMilliseconds(afterAttempt: attempt, retryAfter: result.retryAfter) {
            onOutcome("failed")
            var m = metadata
            m["error"] = "\(error ?? "")"
            m["retry_in_ms"] = "\(delay)"
            logger.info("webhook attempt failed; will retry", metadata: m)
            save(d, attempt: attempt, status: result.status, error: error, milliseconds: milliseconds,
                 outcome: .retry(atMilliseconds: Outbox.nowMilliseconds() + delay))
        } else {
            onOutcome("gave_up")
            var m = metadata
            m["error"] = "\(error ?? "")"
            logger.warning("webhook delivery dead-lettered after its last attempt", metadata: m)
            save(d, attempt: attempt, status: result.status, error: error, milliseconds: milliseconds, outcome: .dead)
        }
    }

    private func save(_ d: DueDelivery, attempt: Int, status: Int?, error: String?, milliseconds: Int, outcome: DeliveryOutcome,
                      also: (@Sendable (any WebhooksWriting) throws -> Void)? = nil) {
        let rid = d.rid
        record({ writer in
            try writer.recordAttempt(rid: rid, attempt: attempt, status: status, error: error, durationMilliseconds: milliseconds, outcome: outcome)
            try also?(writer)
        }, { [self] in finish(rid) })
    }
}
