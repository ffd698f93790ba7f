import Foundation
import Jobs
import JSON
import Logging
import Scripts
import Store

/// Runs the scripts' `roost.every` and `roost.cron` jobs: once per period
/// across every node sharing the database (a lease row per job,
/// `ScheduledRuns`), and a period missed while no node ran runs once at
/// the next start. Each second the scheduler looks at the jobs due; a due
/// period is claimed in the writer, run on the scripts pool, then marked run.
final class ScriptScheduler: @unchecked Sendable {
    let scripts: RoostScripts
    let node: String
    let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stopped = false
    private var running = Set<String>()
    /// The period each job waits for, by key (for the set it was computed from).
    private var waiting: [String: Int64] = [:]
    private var generation = -1
    private let finished = DispatchSemaphore(value: 0)

    init(scripts: RoostScripts, node: String, logger: Logger) {
        self.scripts = scripts
        self.node = node
        self.logger = logger
    }

    func start() {
        NamedThread.start("script-jobs") { [self] in
            while !isStopped {
                tick(now: Int64(Date().timeIntervalSince1970))
                _ = wake.wait(timeout: .now() + 1)
            }
            finished.signal()
        }
    }

    func stop() {
        lock.lock(); stopped = true; lock.unlock()
        wake.signal()
        finished.wait()
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// The job's name in the lease table: its file, schedule and rank among that file's jobs on that schedule.
    static func keys(_ set: ScriptSet) -> [Int: String] {
        var seen: [String: Int] = [:]
        var keys: [Int: String] = [:]
        for (i, r) in set.registrations.enumerated() where r.kind == .every || r.kind == .cron {
            let file = r.location.split(separator: ":").dropLast().joined(separator: ":")
            let base = "\(file)#\(r.kind.rawValue) \(r.target)"
            let rank = seen[base, default: 0]
            seen[base] = rank + 1
            keys[i] = "\(base)#\(rank)"
        }
        return keys
    }

    func tick(now: Int64) {
        let set = scripts.runtime.current
        if set.generation != generation {
            generation = set.generation
            waiting = [:]
        }
        for (index, key) in Self.keys(set) {
            let r = set.registrations[index]
            guard let schedule = try? JobSchedule(kind: r.kind, text: r.target) else { continue }
            // The period to try: the latest at or before now; at first sight of a job, since the last
            // start: a period missed while down is claimed (the row says it did not run).
            let due = waiting[key] ?? schedule.latest(atOrBefore: now) ?? now
            guard due <= now else { continue }
            let fire = schedule.latest(atOrBefore: now) ?? due
            lock.lock()
            let busy = running.contains(key)
            lock.unlock()
            guard !busy else { continue }
            let leaseSeconds = Int64(scripts.runtime.limits.jobNanoseconds / 1_000_000_000) + 5
            let claimed: Bool
            do {
                claimed = try scripts.commit { writer in
                    try writer.claimScheduledRun(job: key, fire: fire, previous: fire, node: self.node, now: now, leaseUntil: now + leaseSeconds)
                }
            } catch {
                logger.warning("scheduled job claim failed", metadata: ["job": "\(key)", "error": "\(error)"])
                continue
            }
            // Not claimed: it ran, or another node holds it; look again in two seconds
            // (a node killed mid-run leaves its lease to expire) until the next period.
            let next = schedule.next(after: fire)
            waiting[key] = claimed ? next : min(next, now + 2)
            guard claimed else { continue }
            run(index, key: key, set: set, fire: fire)
        }
    }

    private func run(_ index: Int, key: String, set: ScriptSet, fire: Int64) {
        lock.lock(); running.insert(key); lock.unlock()
        let (scripts, node, logger) = (self.scripts, self.node, self.logger)
        let requestID = "job-\(fire)-\(UUID().uuidString.prefix(8))"
        let accepted = scripts.pool.submit { [self] worker in
            do {
                let services = WorkerScriptServices(scripts: scripts, reader: try worker.reader(), principal: .admin, roles: [], requestID: requestID)
                let call = ScriptCall(requestID: requestID, caller: .system, services: services)
                do throws(ScriptFailure) {
                    try scripts.runtime.job(index, set: set, fire: fire, call: call)
                } catch {
                    logger.warning("scheduled job failed", metadata: ["job": "\(key)", "request_id": "\(requestID)"])
                }
            } catch {
                logger.warning("scheduled job not run: no reader", metadata: ["job": "\(key)", "error": "\(error)"])
            }
            do { _ = try scripts.commit { writer in try writer.finishScheduledRun(job: key, node: node) } } catch {
                logger.warning("scheduled job's run could not be recorded", metadata: ["job": "\(key)", "error": "\(error)"])
            }
            lock.lock(); running.remove(key); lock.unlock()
        }
        if !accepted {
            lock.lock(); running.remove(key); lock.unlock()
            logger.error("scripts queue full; scheduled job not run", metadata: ["job": "\(key)"])
        }
    }
}
