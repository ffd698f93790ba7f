import Foundation
import Jobs
import Logging
import Store

/// Brings rows' read-rule stamps (`RuleStamp`) up to date after start-up and
/// after each reload: a thread queues short writer jobs of `step` rows each
/// until none is left, and looks again every few minutes (a job dropped by a
/// full queue is retried then). Reads are right meanwhile; a row with an old
/// stamp is judged by the whole rule, only more slowly.
final class RuleRestamper: Sendable {
    static let step = 500
    let pools: StorePools
    let interval: Double
    let logger: Logger
    private let stopped = LockedBox(false)
    private let wanted = LockedBox(true)

    init(pools: StorePools, interval: Double = 300, logger: Logger) {
        self.pools = pools
        self.interval = interval
        self.logger = logger
    }

    func start() {
        NamedThread.start("rule-restamper", background: true) { [self] in
            while !stopped.get() {
                wanted.set(false)
                restamp()
                var waited = 0.0
                while waited < interval && !stopped.get() && !wanted.get() { Thread.sleep(forTimeInterval: 0.25); waited += 0.25 }
            }
        }
    }

    /// A rule may have changed (a reload): look now.
    func kick() { wanted.set(true) }

    func stop() { stopped.set(true) }

    /// Runs steps until one finds nothing more to stamp.
    func restamp() {
        var rows = 0
        while !stopped.get() {
            guard let result = pools.onWriter({ writer in try writer.restampRows(limit: Self.step) }) else { return }
            rows += Self.step
            guard case .success(true) = result else {
                if case .failure(let error) = result { logger.warning("read rule stamps not updated", metadata: ["error": "\(error)"]) }
                break
            }
        }
        if rows > Self.step { logger.info("read rule stamps updated", metadata: ["rows": "about \(rows)"]) }
    }
}
