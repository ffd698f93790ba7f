import Foundation
import JSON
import Jobs
import Logging
import Store
import Webhooks

/// Delivers the push outbox straight to APNs and FCM. One background thread
/// (`push`, nice 10: requests come first) reads due pushes (claimed per node
/// on PostgreSQL), sends a batch of up to `batch` at once as HTTP/2 streams
/// over one long-lived connection per provider host, reads each answer
/// (`ProviderVerdict`), resends once at once what a fresh credential or the
/// other APNs environment may fix, and records every attempt, the devices'
/// counts and the token removals in one writer job. While that job waits
/// for the writer the next batch (never one of the pushes being recorded)
/// is sent; its record goes to the writer only after the previous one
/// committed, and the thread waits for the last one before it sleeps.
///
/// At least once: a push leaves the outbox only when its answer is
/// committed, so a crash between the send and the commit sends it again
/// (the same `apns-collapse-id`, when it has one).
public final class PushDispatcher: @unchecked Sendable {
    public struct Settings: Sendable {
        /// Seconds to wait after each failed attempt; its length sets the number of attempts.
        public var schedule = RetrySchedule(delays: [1, 5, 30, 120, 600, 1800, 3600, 7200])
        public var timeoutMilliseconds = 10_000
        /// Pushes read and recorded together (sent as streams of one connection per provider
        /// origin, at most 1,000 in flight: `roost_h2_direct.c`).
        public var batch = 500
        /// Notifications a second this node sends at most (`push.max_rate`; nil: as fast as
        /// the providers answer). A flood goes in chunks of 100 ms worth (`PushPacer`).
        public var maxRate: Double? = 6_000
        /// The longest the thread sleeps without being woken.
        public var pollMilliseconds = 1_000
        /// A PEM bundle to trust instead of the system's CAs (stand-ins in tests).
        public var caFile: String?
        /// Devices whose app has not registered them for this many seconds are dropped (nil: never).
        public var staleAfterSeconds: Int?
        /// Finished alerts (and their attempts) are forgotten this many seconds after their last change.
        public var keepFinishedSeconds = 7 * 86_400
        /// Finished silent sync pushes, far more numerous and of no later use, much sooner.
        public var keepFinishedBackgroundSeconds = 3_600
        /// Finished pushes forgotten per writer job (the sweep runs such short jobs until fewer remain).
        public var pruneBatch = 1_000
        public init() {}
    }

    /// Runs a write in the writer's next group commit, then calls `done` with whether it committed.
    public typealias Record = @Sendable (_ write: @escaping @Sendable (any PushWriting) throws -> Void, _ done: @escaping @Sendable (Bool) -> Void) -> Void

    let engine: any StoreEngine
    let settings: Settings
    let record: Record
    /// Called per attempt with the provider (`apns`, `fcm`, `none`) and outcome (`delivered`, `failed`, `gave_up`, `dropped`).
    let onOutcome: @Sendable (String, String) -> Void
    /// Called per removed device with the reason.
    let onRemoval: @Sendable (String) -> Void
    /// Called with the number of connections a batch had to open (0 when it reused them).
    let onConnectionsOpened: @Sendable (Int) -> Void
    let logger: Logger
    let apns: APNsProvider?
    let fcm: FCMProvider?
    private let loop = OutboxLoop<(reader: any DocumentReading, client: HTTP2Client)>(name: "push", background: true)
    /// The last batch's record, with the writer while the next batch is sent (thread only).
    var pending: PendingRecord?
    private var lastSweep = Date.distantPast
    /// The bucket that holds delivery to `settings.maxRate` (thread only).
    private var pacer: PushPacer
    /// Whether the last pass sent all the pacer allowed (a flood: wait for a whole chunk).
    private var flooding = false
    /// Connections the client opened (tests check reuse through the metrics).
    public let connections = LockedBox(0)
    /// Pushes whose attempt could not be recorded (writer error, queue full):
    /// not sent again before this time (ms), though the outbox still shows them due.
    var heldUntil: [Int64: Int64] = [:]
    /// Batches in a row whose record failed: the back-off doubles with each.
    var failedSaves = 0
    /// Removals are suspended until this time (ms) after a batch in which most pushes asked for one.
    var removalsPausedUntil: Int64 = 0

    public init(engine: any StoreEngine, settings: Settings, apns: APNsProvider?, fcm: FCMProvider?, record: @escaping Record,
                onOutcome: @escaping @Sendable (String, String) -> Void, onRemoval: @escaping @Sendable (String) -> Void,
                onConnectionsOpened: @escaping @Sendable (Int) -> Void = { _ in }, logger: Logger) {
        self.engine = engine
        self.settings = settings
        pacer = PushPacer(rate: settings.maxRate, batch: settings.batch)
        self.apns = apns
        self.fcm = fcm
        self.record = record
        self.onOutcome = onOutcome
        self.onRemoval = onRemoval
        self.onConnectionsOpened = onConnectionsOpened
        self.logger = logger
    }

    /// The platforms a provider is configured for: pushes are enqueued for these only.
    public var platforms: [String] { (apns == nil ? [] : ["ios"]) + (fcm == nil ? [] : ["android"]) }

    public func start() throws {
        try loop.start(open: { [engine, settings] in (try engine.openReader(role: "push"), try HTTP2Client(caFile: settings.caFile)) },
                       pass: { [self] in pass($0.reader, $0.client) })
    }

    /// Stops after the batch in hand; what was not sent stays in the outbox.
    public func shutdown() { loop.shutdown() }

    /// Looks for due pushes now (after a commit that added some).
    public func wake() { loop.wake() }

    var isStopped: Bool { loop.isStopped }

    /// Sweeps stale devices when due, sends one batch of due pushes and
    /// records it; returns the milliseconds to sleep (0: a full batch went, read again).
    private func pass(_ reader: any PushReading, _ client: HTTP2Client) -> Int64 {
        var waitMilliseconds = Int64(settings.pollMilliseconds)
        do {
            // Stale devices: at start, then every minute (sooner for a short age).
            if Date().timeIntervalSince(lastSweep) > min(60, Double(settings.staleAfterSeconds ?? 120) / 2) {
                lastSweep = Date()
                sweep(staleAfter: settings.staleAfterSeconds)
            }
            let now = Outbox.nowMilliseconds()
            heldUntil = heldUntil.filter { $0.value > now }
            // The pushes being recorded are still pending in the outbox: read past them, never send them again.
            let recording = Set(pending?.rids ?? [])
            let allowed = pacer.allowed(now: now, flooding: flooding)
            if allowed.count == 0 {
                settlePending()
                return allowed.waitMilliseconds
            }
            let limit = min(settings.batch, allowed.count)
            let read = try reader.duePushes(now: now, limit: limit + recording.count)
            let due = Array(read.filter { heldUntil[$0.rid] == nil && !recording.contains($0.rid) }.prefix(limit))
            flooding = false
            if !due.isEmpty {
                pacer.spend(due.count)
                let records = deliver(due, client)
                let opened = client.connections - connections.get()
                connections.set(client.connections)
                if opened > 0 { onConnectionsOpened(opened) }
                // One record with the writer at a time, in order: the previous one first.
                settlePending()
                pending = submit(records)
                if due.count == limit && failedSaves == 0 && !isStopped {
                    flooding = true
                    let next = pacer.allowed(now: Outbox.nowMilliseconds(), flooding: true)
                    if next.count > 0 { return 0 }
                    // Paced: the record commits while the bucket refills for the next chunk.
                    settlePending()
                    return next.waitMilliseconds
                }
            }
            // Nothing more to send now: the last record commits before the next read or sleep.
            settlePending()
            if failedSaves > 0 {
                waitMilliseconds = max(waitMilliseconds, Self.saveBackoffMilliseconds(failures: failedSaves))
            } else if read.count > due.count {
                // Only held pushes are due: wait for the earliest hold to end.
                let until = heldUntil.values.min() ?? now
                waitMilliseconds = min(waitMilliseconds, max(until - now, 5))
            } else if let next = try reader.nextPushDue() {
                waitMilliseconds = next > now ? min(waitMilliseconds, next - now) : 0
            }
        } catch {
            logger.error("push dispatcher cannot read the outbox", metadata: ["error": "\(error)"])
        }
        return waitMilliseconds
    }

    /// One push's way through a batch.
    struct Job {
        let push: DuePush
        let notification: PushNotification
        /// APNs: the environment tried; FCM: nil.
        var environment: String?
        var verdict: ProviderVerdict?
        var retried = false
        /// APNs environments that answered this job (BadDeviceToken removes only when both did).
        var answeredIn: Set<String> = []
    }

    /// Sends a batch.
    /// - Returns: every attempt's record, for the writer.
    func deliver(_ due: [DuePush], _ client: HTTP2Client) -> [PushAttemptRecord] {
        var records: [PushAttemptRecord] = []
        var jobs: [Job] = []
        var notifications: [String: PushNotification?] = [:]
        var giveWay = GiveWay()
        for push in due {
            giveWay.check()
            let attempt = push.attempts + 1
            guard let device = push.device else {
                records.append(PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: nil,
                                                 error: "the device was removed", outcome: .dropped))
                onOutcome("none", "dropped")
                continue
            }
            // A message's pushes to a user's devices share one payload: parsed once per batch.
            let known = notifications[push.payload]
            let notification = known ?? (try? JSONParser.parse(push.payload)).flatMap(PushNotification.init(json:))
            if known == nil { notifications[push.payload] = .some(notification) }
            guard let notification else {
                records.append(PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: nil,
                                                 error: "unreadable notification", outcome: .dead))
                onOutcome("none", "gave_up")
                continue
            }
            let provided = (push.platform == "ios" && apns != nil) || (push.platform == "android" && fcm != nil)
            guard provided else {
                records.append(PushAttemptRecord(rid: push.rid, token: push.token, attempt: attempt, status: nil,
                                                 error: "no push provider is configured for \(push.platform)", outcome: .dead))
                onOutcome("none", "gave_up")
                continue
            }
            jobs.append(Job(push: push, notification: notification, environment: push.platform == "ios" ? (device.environment ?? "production") : nil))
        }
        var responses = send(&jobs, indices: Array(jobs.indices), client)
        // Once at once: a fresh credential, or the other APNs environment.
        var again: [Int] = []
        var expiredAPNs = false, expiredFCM = false
        for i in jobs.indices {
            switch jobs[i].verdict {
            case .refreshCredential?:
                if jobs[i].push.platform == "ios" { expiredAPNs = true } else { expiredFCM = true }
                again.append(i)
            case .tryOtherEnvironment?:
                jobs[i].environment = jobs[i].environment == "sandbox" ? "production" : "sandbox"
                again.append(i)
            default: break
            }
        }
        if expiredAPNs { apns?.expireToken() }
        if expiredFCM { fcm?.expireToken() }
        if !again.isEmpty {
            for i in again { jobs[i].retried = true }
            let second = send(&jobs, indices: again, client)
            for (i, r) in second { responses[i] = r }
        }
        for (i, job) in jobs.enumerated() {
            giveWay.check()
            records.append(outcome(job, response: responses[i]))
        }
        return breaker(records)
    }

    /// Sends `indices` of `jobs` together and sets their verdicts.
    /// - Returns: each job's response (status and error, for the record).
    private func send(_ jobs: inout [Job], indices: [Int], _ client: HTTP2Client) -> [Int: HTTP2Response] {
        var requests: [HTTP2Request] = []
        var sent: [Int] = []
        var fcmToken: String?
        var fcmFailure: String?
        if fcm != nil, indices.contains(where: { jobs[$0].push.platform == "android" }) {
            do { fcmToken = try fcm!.accessToken(client, timeoutMilliseconds: settings.timeoutMilliseconds) } catch {
                fcmFailure = "\(error)"
                logger.warning("FCM access token not available; FCM pushes wait", metadata: ["error": "\(error)"])
            }
        }
        var out: [Int: HTTP2Response] = [:]
        // APNs bodies by outbox payload: encoded once per batch however many devices share one.
        var apnsPayloads: [String: [UInt8]?] = [:]
        var giveWay = GiveWay()
        for i in indices {
            giveWay.check()
            let job = jobs[i]
            if job.push.platform == "ios", let apns {
                let known = apnsPayloads[job.push.payload]
                let encoded = known ?? job.notification.apnsPayload()
                if known == nil { apnsPayloads[job.push.payload] = .some(encoded) }
                guard let payload = encoded else {
                    jobs[i].verdict = .dead(reason: "the notification does not fit APNs's 4 KB")
                    continue
                }
                do {
                    requests.append(try apns.request(job.push, job.notification, payload: payload, environment: job.environment ?? "production"))
                    sent.append(i)
                } catch {
                    jobs[i].verdict = .retry(retryAfter: nil, reason: "cannot sign the APNs provider token: \(error)")
                }
            } else if job.push.platform == "android", let fcm {
                guard let token = fcmToken else {
                    jobs[i].verdict = .retry(retryAfter: nil, reason: fcmFailure ?? "no FCM access token")
                    continue
                }
                requests.append(fcm.request(job.push, job.notification, accessToken: token))
                sent.append(i)
            }
        }
        let responses = client.perform(requests, timeoutMilliseconds: settings.timeoutMilliseconds)
        for (k, i) in sent.enumerated() {
            giveWay.check()
            let response = responses[k]
            out[i] = response
            jobs[i].verdict = jobs[i].push.platform == "ios" ? APNsProvider.verdict(response) : FCMProvider.verdict(response)
            if response.status != nil, let environment = jobs[i].environment { jobs[i].answeredIn.insert(environment) }
        }
        return out
    }
}
