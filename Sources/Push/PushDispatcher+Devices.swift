import Foundation
import Jobs
import Logging
import Store

/// Devices leaving: a provider disowned a token, or its app has not
/// registered it again for `push.token_max_age_days`.
extension PushDispatcher {
    func removedDevice(_ token: String, _ reason: String) {
        onRemoval(reason)
        logger.notice("push device removed", metadata: ["token": "\(token.prefix(8))…", "reason": "\(reason)"])
    }

    /// Drops devices not registered again for `staleAfter` seconds, and
    /// forgets old finished pushes in short writer jobs (`pruneBatch` rows
    /// each) until fewer than a batch remain (at most 100 jobs a sweep).
    func sweep(staleAfter: Int?) {
        let cutoff = staleAfter.map { Timestamp.format(Date().addingTimeInterval(-Double($0))) }
        let alerts = Timestamp.format(Date().addingTimeInterval(-Double(settings.keepFinishedSeconds)))
        let background = Timestamp.format(Date().addingTimeInterval(-Double(settings.keepFinishedBackgroundSeconds)))
        let limit = settings.pruneBatch
        for _ in 0..<100 where !isStopped {
            let done = DispatchSemaphore(value: 0)
            let pruned = LockedBox(0)
            record({ writer in pruned.set(try writer.pruneFinishedPushes(alertsBefore: alerts, backgroundBefore: background, limit: limit)) },
                   { _ in done.signal() })
            done.wait()
            if pruned.get() < limit { break }
        }
        guard let cutoff else { return }
        let done = DispatchSemaphore(value: 0)
        let removed = LockedBox<[String]>([])
        record({ writer in removed.set(try writer.expireStaleDevices(seenBefore: cutoff)) }, { _ in done.signal() })
        done.wait()
        for token in removed.get() { removedDevice(token, "stale") }
    }
}
