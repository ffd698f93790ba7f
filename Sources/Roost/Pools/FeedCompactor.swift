import Foundation
import HTTP
import Jobs
import Logging
import Store

/// Trims the change feed to `changes_retention`: every few minutes a thread
/// queues short writer jobs that each remove one step of old changes (a few
/// milliseconds of the writer), until none is older than the retention.
final class FeedCompactor: Sendable {
    let pools: StorePools
    let retention: Int64
    let interval: Double
    let logger: Logger
    private let stopped = LockedBox(false)

    init(pools: StorePools, retention: Int64, interval: Double = 300, logger: Logger) {
        self.pools = pools
        self.retention = retention
        self.interval = interval
        self.logger = logger
    }

    func start() {
        NamedThread.start("feed-compactor", background: true) { [self] in
            while !stopped.get() {
                compact()
                var waited = 0.0
                while waited < interval && !stopped.get() { Thread.sleep(forTimeInterval: 0.5); waited += 0.5 }
            }
        }
    }

    func stop() { stopped.set(true) }

    /// Runs compaction steps until one removes less than a full step.
    func compact() {
        let retention = self.retention
        while !stopped.get() {
            guard let result = pools.onWriter({ writer in try writer.compactChanges(retention: retention) }) else { return }
            var removed = 0
            switch result {
            case .success(let count): removed = count
            case .failure(let error): logger.warning("change feed compaction failed", metadata: ["error": "\(error)"])
            }
            if removed > 0 { logger.debug("change feed compacted", metadata: ["removed": "\(removed)"]) }
            if removed < ChangeFeed.compactionStep { return }
        }
    }
}
