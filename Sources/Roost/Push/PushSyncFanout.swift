import Foundation
import JSON
import Jobs
import Logging
import Push
import Store

/// Silent sync pushes: after each commit, one thread (`push-sync`) reads
/// the change feed for collections with `push_sync: true` and decides, with
/// the very rule live streams use (`ParsedChange.readable`: the entity's
/// `_acl` and the collection's level or read rule, with the user's roles,
/// before or after the change), which users with sync devices may read each
/// change; a role membership change (a `_roles` feed entry) makes it read
/// the roles again before the next change, as it resets a live stream. Each such device gets a
/// background push naming the collections that changed, at most one per
/// `push.sync_interval` (changes in between are coalesced into the next,
/// which carries the collapse id `roost-sync`). The pushes go into the push
/// outbox through `PushSender` in one writer job per round.
///
/// At least once across a crash: the feed position is saved in
/// `data_dir/push-sync.position` (with the feed's epoch) whenever no device
/// is left waiting, so a restart reads again every change whose pushes
/// were not yet queued; a device may then be woken twice.
final class PushSyncFanout: @unchecked Sendable {
    static let collapseID = "roost-sync"

    let engine: any StoreEngine
    let access: AccessPolicy
    let collections: Set<String>
    let interval: Double
    let sender: PushSender
    let record: @Sendable (_ write: @escaping @Sendable (any PushWriting) throws -> Void, _ done: @escaping @Sendable () -> Void) -> Void
    let logger: Logger
    /// Where the feed position is saved (nil: not saved).
    let positionFile: String?

    private let condition = NSCondition()
    private var woken = false
    private var stopped = false
    private let finished = DispatchGroup()

    // The thread's own state.
    private var position: Int64 = 0
    private var devices: [String: [PushDevice]] = [:]
    /// The role names of the devices' users, read with the devices.
    private var roles: [String: [String]] = [:]
    private var devicesRead = Date.distantPast
    /// A role membership changed since the roles were read (a `_roles` feed entry).
    private var rolesChanged = false
    /// Per device token: when its last sync push was enqueued, and the collections waiting for the next.
    private var lastSent: [String: Date] = [:]
    private var waiting: [String: (user: String, collections: Set<String>)] = [:]
    /// Devices whose push the outbox just skipped (another node's push within the interval):
    /// tried once more an interval later, so no change goes unannounced.
    private var skippedOnce: Set<String> = []

    init(engine: any StoreEngine, access: AccessPolicy, collections: Set<String>, interval: Double, sender: PushSender,
         record: @escaping @Sendable (_ write: @escaping @Sendable (any PushWriting) throws -> Void, _ done: @escaping @Sendable () -> Void) -> Void,
         positionFile: String?, logger: Logger) {
        self.positionFile = positionFile
        self.engine = engine
        self.access = access
        self.collections = collections
        self.interval = interval
        self.sender = sender
        self.record = record
        self.logger = logger
    }

    func start() throws {
        // The reader is opened on its own thread and stays there.
        let opened = DispatchSemaphore(value: 0)
        let failure = LockedBox<(any Error)?>(nil)
        finished.enter()
        NamedThread.start("push-sync") { [self] in
            defer { finished.leave() }
            let reader: any DocumentReading
            do {
                reader = try engine.openReader(role: "push-sync")
                position = try resumePosition(reader)
            } catch {
                failure.set(error)
                opened.signal()
                return
            }
            opened.signal()
            run(reader)
        }
        opened.wait()
        if let error = failure.get() { throw error }
    }

    func wake() {
        condition.lock(); woken = true; condition.signal(); condition.unlock()
    }

    func shutdown() {
        condition.lock(); stopped = true; condition.signal(); condition.unlock()
        finished.wait()
    }

    private func run(_ reader: any FeedReading & PushReading & RolesReading) {
        while true {
            condition.lock()
            if stopped { condition.unlock(); return }
            woken = false
            condition.unlock()
            var more = false
            do {
                more = try round(reader)
            } catch {
                logger.warning("silent sync pushes: cannot read the change feed; retrying", metadata: ["error": "\(error)"])
            }
            if more { continue }
            let pause = nextDue().map { max(0.01, $0.timeIntervalSinceNow) } ?? 1
            condition.lock()
            if !stopped && !woken { _ = condition.wait(until: Date().addingTimeInterval(min(pause, 1))) }
            condition.unlock()
        }
    }

    /// Reads new changes, marks the devices that may see them, and enqueues
    /// the pushes that are due. - Returns: true when a full batch was read.
    private func round(_ reader: any FeedReading & PushReading & RolesReading) throws -> Bool {
        let (changes, _) = try reader.changes(after: position, limit: 500)
        for change in changes {
            // A role membership changed: what its user may read changed from this change on, as a
            // live stream is reset then; the roles are read again before the next change is judged.
            if change.collection == LiveHub.roleChanges { rolesChanged = true }
            guard collections.contains(change.collection) else { continue }
            if rolesChanged || Date().timeIntervalSince(devicesRead) > 1 {
                devices = Dictionary(grouping: try reader.syncDevices(limit: 100_000).filter { sender.platforms.contains($0.platform) }, by: \.userID)
                // Roles decide who reads a row only where rows are private or ruled: read them only then.
                let rolesMatter = collections.contains { access.rules(of: $0) != nil || access.level(of: $0) == .private }
                roles = rolesMatter ? try reader.rolesByUser() : [:]
                devicesRead = Date()
                rolesChanged = false
            }
            let parsed = ParsedChange(change, level: access.level(of: change.collection), rules: access.rules(of: change.collection))
            for (user, owned) in devices {
                let scope = AccessScope(principal: .user(user), level: parsed.level, roles: roles[user] ?? [], rules: parsed.rules)
                guard parsed.readable(by: scope, after: true) || parsed.readable(by: scope, after: false) else { continue }
                for device in owned {
                    waiting[device.token, default: (user, [])].collections.insert(change.collection)
                }
            }
        }
        if let last = changes.last { position = last.seq }
        flushDue()
        if waiting.isEmpty && position != saved && Date().timeIntervalSince(savedAt) >= 0.5 { save(position) }
        return changes.count == 500
    }

    /// The position last saved (thread only).
    private var saved: Int64 = -1
    private var savedAt = Date.distantPast
    private var epoch = ""

    /// The saved position when it is from this feed and still retained, else the head.
    private func resumePosition(_ reader: any FeedReading) throws -> Int64 {
        let (epoch, horizon) = try reader.feedMeta()
        self.epoch = epoch
        let head = try reader.feedHead()
        guard let positionFile, let text = try? String(contentsOfFile: positionFile, encoding: .utf8) else { return head }
        let parts = text.split(separator: " ")
        guard parts.count == 2, parts[0] == epoch, let seq = Int64(parts[1]), seq >= horizon, seq <= head else { return head }
        if seq < head { logger.info("silent sync pushes resume from the saved feed position", metadata: ["behind": "\(head - seq)"]) }
        saved = seq
        return seq
    }

    private func save(_ seq: Int64) {
        guard let positionFile else { return }
        let temporary = positionFile + ".tmp"
        do {
            try "\(epoch) \(seq)".write(toFile: temporary, atomically: false, encoding: .utf8)
            if rename(temporary, positionFile) != 0 { throw PushError("rename failed") }
            saved = seq
            savedAt = Date()
        } catch {
            logger.warning("cannot save the silent sync position", metadata: ["file": "\(positionFile)", "error": "\(error)"])
        }
    }

    /// When the next waiting device may be pushed.
    private func nextDue() -> Date? {
        waiting.keys.map { (lastSent[$0] ?? .distantPast).addingTimeInterval(interval) }.min()
    }

    /// Enqueues one background push for every waiting device whose interval has passed.
    private func flushDue() {
        let now = Date()
        var due: [(token: String, user: String, collections: [String])] = []
        for (token, entry) in waiting where now.timeIntervalSince(lastSent[token] ?? .distantPast) >= interval {
            due.append((token, entry.user, entry.collections.sorted()))
        }
        guard !due.isEmpty else { return }
        // In token order: on PostgreSQL each device's coalescing lock is taken in this order on every node.
        due.sort { $0.token < $1.token }
        for d in due {
            waiting[d.token] = nil
            lastSent[d.token] = now
        }
        var skipped: [(token: String, user: String, collections: [String])] = []
        if lastSent.count > 100_000 { lastSent = lastSent.filter { now.timeIntervalSince($0.value) < interval } }
        // Short writer jobs: 500 devices each.
        for start in stride(from: 0, to: due.count, by: 500) {
            skipped += enqueue(Array(due[start..<min(start + 500, due.count)]))
        }
        for d in due { if !skipped.contains(where: { $0.token == d.token }) { skippedOnce.remove(d.token) } }
        for d in skipped where !skippedOnce.contains(d.token) {
            skippedOnce.insert(d.token)
            waiting[d.token, default: (d.user, [])].collections.formUnion(d.collections)
        }
        if skippedOnce.count > 100_000 { skippedOnce.removeAll() }
    }

    /// Enqueues one chunk of silent pushes in one writer job and waits for it.
    /// - Returns: those the outbox added nothing for (coalesced, or the device is gone).
    private func enqueue(_ pushes: [(token: String, user: String, collections: [String])]) -> [(token: String, user: String, collections: [String])] {
        let (sender, interval) = (self.sender, self.interval)
        let done = DispatchSemaphore(value: 0)
        let added = LockedBox<Set<String>>([])
        record({ writer in
            var mine = Set<String>()
            for d in pushes {
                var sync = JSONObject()
                sync["sync"] = .array(d.collections.map { .string($0) })
                var data = JSONObject()
                data["roost"] = .object(sync)
                let notification = PushNotification(data: data, background: true, timeToLive: 3600)
                // Other nodes read the same feed: the outbox keeps one per device and interval.
                if try sender.enqueue(writer, userID: d.user, notification: notification, collapseID: Self.collapseID, syncOnly: true,
                                      token: d.token, coalesceSeconds: interval * 0.9) > 0 {
                    mine.insert(d.token)
                }
            }
            added.set(mine)
        }, { done.signal() })
        done.wait()
        let sent = added.get()
        return pushes.filter { !sent.contains($0.token) }
    }
}
