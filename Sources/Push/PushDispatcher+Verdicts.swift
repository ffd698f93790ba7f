import Foundation
import JSON
import Jobs
import Logging
import Store
import Webhooks

/// What a batch's answers mean (each job's attempt record, and the breaker
/// that keeps a misconfiguration from removing every device) and how the
/// writer records them, one batch's record in flight while the next is sent.
extension PushDispatcher {
    /// The wait after `failures` records in a row failed: 0.5 s doubling, at most a minute.
    static func saveBackoffMilliseconds(failures: Int) -> Int64 {
        failures <= 0 ? 0 : min(60_000, 500 << min(failures - 1, 20))
    }

    /// Suspends removals (for ten minutes) when most of a batch asks for
    /// one: a wrong topic, project or endpoint looks like every token dying,
    /// and must not wipe the devices. The pushes still finish as dead.
    func breaker(_ records: [PushAttemptRecord], now: Int64 = Outbox.nowMilliseconds()) -> [PushAttemptRecord] {
        let removals = records.filter { $0.removal != nil }.count
        if Self.removalsLookWrong(removals: removals, of: records.count) {
            removalsPausedUntil = now + 600_000
            logger.error("most of a push batch asked to remove its device: removals suspended for 10 minutes; check the push credentials, topic and project",
                         metadata: ["removals": "\(removals)", "batch": "\(records.count)"])
        }
        guard now < removalsPausedUntil, removals > 0 else { return records }
        return records.map { r in
            guard r.removal != nil else { return r }
            return PushAttemptRecord(rid: r.rid, token: r.token, attempt: r.attempt, status: r.status,
                                     error: (r.error ?? "") + " (device kept: removals suspended)", outcome: .dead, environment: r.environment)
        }
    }

    /// More than half of a batch of at least ten asking for removal.
    static func removalsLookWrong(removals: Int, of count: Int) -> Bool {
        count >= 10 && removals * 2 > count
    }

    /// The record of one job's attempt, from its final verdict.
    func outcome(_ job: Job, response: HTTP2Response?) -> PushAttemptRecord {
        let push = job.push
        let attempt = push.attempts + 1
        let provider = push.platform == "ios" ? "apns" : "fcm"
        let status = response?.status
        func retry(_ retryAfter: Int?, _ reason: String) -> PushAttemptRecord {
            if let delay = settings.schedule.delayMilliseconds(afterAttempt: attempt, retryAfter: retryAfter) {
                onOutcome(provider, "failed")
                logger.info("push attempt failed; will retry", metadata: ["push": "\(push.rid)", "error": "\(reason)", "retry_in_ms": "\(delay)"])
                return PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: status, error: reason,
                                         outcome: .retry(atMilliseconds: Outbox.nowMilliseconds() + delay))
            }
            onOutcome(provider, "gave_up")
            logger.warning("push given up after its last attempt", metadata: ["push": "\(push.rid)", "error": "\(reason)"])
            return PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: status, error: reason, outcome: .dead)
        }
        switch job.verdict ?? .retry(retryAfter: nil, reason: "not sent") {
        case .delivered:
            onOutcome(provider, "delivered")
            // A token registered without its environment (or with the wrong one) keeps the one that worked.
            let environment = push.platform == "ios" && job.environment != push.device?.environment ? job.environment : nil
            return PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: status, error: nil, outcome: .delivered,
                                     environment: environment)
        case .retry(let after, let reason):
            return retry(after, reason)
        case .refreshCredential(let reason):
            return retry(nil, reason + " (after a fresh credential)")
        case .tryOtherEnvironment(let reason):
            // Refused by both environments: the token itself is bad. Unless both answered, it is only a failed attempt.
            guard job.answeredIn == ["production", "sandbox"] else { return retry(nil, reason + " (the other environment did not answer)") }
            onOutcome(provider, "gave_up")
            return PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: status, error: reason + " (production and sandbox)",
                                     outcome: .dead, removal: .init(reason: "BadDeviceToken", ifSeenBefore: nil))
        case .removeDevice(let reason, let before):
            onOutcome(provider, "gave_up")
            return PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: status, error: reason, outcome: .dead,
                                     removal: .init(reason: Self.removalLabel(reason), ifSeenBefore: before))
        case .dead(let reason):
            onOutcome(provider, "gave_up")
            if reason.contains("DeviceTokenNotForTopic") {
                logger.error("APNs says the token is not for push.apns.topic: check the topic (bundle id); the device is kept",
                             metadata: ["push": "\(push.rid)", "topic": "\(apns?.settings.topic ?? "")"])
            } else {
                logger.warning("push refused by its provider", metadata: ["push": "\(push.rid)", "error": "\(reason)"])
            }
            return PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: status, error: reason, outcome: .dead)
        }
    }

    /// The `reason` label of `roost_push_tokens_removed_total`.
    static func removalLabel(_ reason: String) -> String {
        if reason.contains("410") { return "Unregistered" }
        if reason.contains("DeviceTokenNotForTopic") { return "DeviceTokenNotForTopic" }
        if reason.contains("UNREGISTERED") || reason.hasPrefix("FCM 404") { return "UNREGISTERED" }
        if reason.contains("INVALID_ARGUMENT") { return "INVALID_ARGUMENT" }
        return "other"
    }

    /// A batch's record handed to the writer.
    final class PendingRecord: @unchecked Sendable {
        let rids: [Int64]
        let done = DispatchSemaphore(value: 0)
        let committed = LockedBox(false)
        let removed = LockedBox<[(token: String, reason: String)]>([])
        init(rids: [Int64]) { self.rids = rids }
    }

    /// Hands a batch's records to the writer without waiting (nil when there are none).
    func submit(_ records: [PushAttemptRecord]) -> PendingRecord? {
        guard !records.isEmpty else { return nil }
        let p = PendingRecord(rids: records.map(\.rid))
        record({ writer in p.removed.set(try writer.recordPushAttempts(records)) }, { ok in p.committed.set(ok); p.done.signal() })
        return p
    }

    /// Waits for the record with the writer, if any. A record that did not
    /// commit leaves its pushes pending and due: they are held back, with a
    /// back-off that doubles with each failure in a row, rather than sent again at once.
    func settlePending() {
        guard let p = pending else { return }
        pending = nil
        p.done.wait()
        if p.committed.get() {
            failedSaves = 0
            for (token, reason) in p.removed.get() { removedDevice(token, reason) }
            return
        }
        failedSaves += 1
        let backoff = Self.saveBackoffMilliseconds(failures: failedSaves)
        let until = Outbox.nowMilliseconds() + backoff
        for rid in p.rids { heldUntil[rid] = until }
        logger.error("push attempts not recorded; holding the batch", metadata: ["pushes": "\(p.rids.count)", "retry_in_ms": "\(backoff)"])
    }
}
