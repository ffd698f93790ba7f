import Daemon
import Foundation
import HTTP
import Logging
import Store
import Webhooks

extension RoostServer {
    /// The webhook dispatcher (not started): outcomes are recorded through the
    /// writer's group commit and counted in `roost_webhook_deliveries_total`.
    func makeWebhookDispatcher(engine: any StoreEngine, pools: StorePools) -> WebhookDispatcher {
        var settings = WebhookDispatcher.Settings()
        settings.schedule = RetrySchedule(delays: config.webhooks.retrySchedule)
        settings.timeoutMilliseconds = Int(config.webhooks.timeout * 1000)
        settings.workers = config.webhooks.workers
        let counters = Dictionary(uniqueKeysWithValues: RoostMetrics.webhookOutcomes.map { ($0, RoostMetrics.webhookDeliveries(outcome: $0)) })
        let logger = self.logger
        let dispatcher = WebhookDispatcher(
            engine: engine, settings: settings,
            record: { write, done in Self.record(pools, { try write($0) }, done, logger) },
            onOutcome: { outcome in counters[outcome]?.increment() },
            logger: logger)
        return dispatcher
    }

    /// Queues a delivery's bookkeeping on the writer, waiting for room when
    /// the queue is full. If it never commits the delivery stays pending and
    /// is sent again: at least once, never lost.
    static func record(_ pools: StorePools, _ write: @escaping @Sendable (any DocumentWriting) throws -> Void,
                       _ done: @escaping @Sendable () -> Void, _ logger: Logger) {
        let job = StorePools.WriteJob(operation: write) { result in
            if case .failure(let error) = result {
                logger.error("cannot record a webhook attempt", metadata: ["error": "\(error)"])
            }
            done()
        }
        for _ in 0..<200 {
            if pools.writer.submit(job) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        logger.warning("writer queue stayed full; webhook attempt not recorded (it will be retried)")
        done()
    }
}
