import Daemon
import EventLoop
import Foundation
import JSON
import Jobs
import Logging
import Store

/// Fans the change feed out to live streams. One thread reads the feed after
/// each group commit (woken by the writer), decides in memory which
/// subscriber may see each change (its `_acl` and the collection's level,
/// then the subscriber's filter on the document itself) and hands every
/// loop its bytes in one `execute` per batch. Neither the writer nor a loop
/// ever waits on a client; a client that falls `bufferLimit` bytes behind is
/// dropped and resumes with `Last-Event-ID`.
///
/// Every subscriber has a feed position: it gets exactly the changes after
/// it, in commit order. A new stream that resumes from an older position
/// catches up from the feed on this thread before it joins the live ones.
final class LiveHub: @unchecked Sendable {
    final class Subscriber: @unchecked Sendable {
        let id: Int
        /// Loop-confined: touched only through `stream.loop.execute`.
        let stream: ResponseStream
        let principal: AccessScope.Principal
        let tokenHash: String?
        let subscription: LiveSubscription
        let since: FeedCursor?
        // Hub thread only:
        var position: Int64 = 0

        init(id: Int, stream: ResponseStream, principal: AccessScope.Principal, tokenHash: String?,
             subscription: LiveSubscription, since: FeedCursor?) {
            self.id = id
            self.stream = stream
            self.principal = principal
            self.tokenHash = tokenHash
            self.subscription = subscription
            self.since = since
        }
    }

    let databasePath: String
    let access: AccessPolicy
    let filesLevel: AccessScope.Level
    let heartbeat: Double
    let bufferLimit: Int
    let maxStreams: Int
    let logger: Logger
    let metrics = Telemetry.live()

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var added: [Subscriber] = []
    private var removed: [Int] = []
    private var woken = false
    private var stopped = false
    private var nextID = 0
    private var open = 0
    private var checkSessions = false
    private var stoppedAt: Date?
    /// Some subscriber is catching up: come back soon (hub thread only).
    private var behind = false

    // Hub thread only.
    private var subscribers: [Int: Subscriber] = [:]
    private var head: Int64 = 0
    private var epoch = ""
    private var probes: [String: FilterProbe] = [:]
    private var outgoing: [Int: (EventLoop, [(ResponseStream, [UInt8])])] = [:]
    private var lastBeat = Date()
    private var reader: DocumentReader?
    /// Where each subscriber's bytes sit in `outgoing` this round.
    private var slot: [Int: Int] = [:]
    /// Which resuming stream goes first next round (they take turns).
    private var catchUpTurn = 0

    /// Changes per round: small enough that loops get bytes while the next round is built.
    static let batch = 200
    /// Changes read per round for all streams that are catching up.
    static let catchUpBudget = 1000

    init(databasePath: String, access: AccessPolicy, filesLevel: AccessScope.Level, config: RoostConfig, logger: Logger) {
        self.databasePath = databasePath
        self.access = access
        self.filesLevel = filesLevel
        heartbeat = Double(config.liveHeartbeat)
        bufferLimit = config.liveBufferBytes
        maxStreams = config.liveMaxConnections
        self.logger = logger
    }

    func start() throws {
        let reader = try DocumentReader(path: databasePath)
        epoch = try reader.feedMeta().epoch
        head = try reader.feedHead()
        self.reader = reader
        NamedThread.start("live-fanout") { [self] in run(self.reader!) }
    }

    /// Reserves a slot for a new stream; false past `live_max_connections`.
    func reserve() -> Bool {
        condition.lock(); defer { condition.unlock() }
        guard !stopped, open < maxStreams else { return false }
        open += 1
        return true
    }

    /// Live streams open (or being opened) now.
    var openStreams: Int {
        condition.lock(); defer { condition.unlock() }
        return open
    }

    /// Gives back a slot reserved for a stream that never started.
    func release() {
        condition.lock(); open -= 1; condition.unlock()
    }

    /// Adds a started stream (on its loop); it is removed when it closes.
    func add(stream: ResponseStream, principal: AccessScope.Principal, tokenHash: String?,
             subscription: LiveSubscription, since: FeedCursor?) {
        condition.lock()
        nextID += 1
        let subscriber = Subscriber(id: nextID, stream: stream, principal: principal, tokenHash: tokenHash,
                                    subscription: subscription, since: since)
        added.append(subscriber)
        condition.signal()
        condition.unlock()
        stream.setOnClose { [self] in
            condition.lock()
            removed.append(subscriber.id)
            open -= 1
            condition.signal()
            condition.unlock()
        }
    }

    /// After each group commit: there may be new changes.
    /// Costs the writer nothing while no stream is open: the hub reads the
    /// feed's head when a stream comes (and every second meanwhile).
    func wake() {
        condition.lock()
        if open > 0 { woken = true; condition.signal() }
        condition.unlock()
    }

    /// Ends every stream (clients reconnect and resume) and stops the thread.
    func shutdown() {
        condition.lock(); stopped = true; stoppedAt = Date(); condition.signal(); condition.unlock()
    }

    /// After `shutdown`: every stream has ended and its last chunk had a moment to leave.
    var drained: Bool {
        condition.lock(); defer { condition.unlock() }
        return open == 0 && Date().timeIntervalSince(stoppedAt ?? .distantPast) > 0.3
    }

    // MARK: - The fan-out thread

    private func run(_ reader: DocumentReader) {
        while true {
            condition.lock()
            // A subscriber catching up is served again after a short pause, so its loop can send what it got.
            let pause = behind ? 0.005 : 1
            while !woken && added.isEmpty && removed.isEmpty && !stopped {
                if !condition.wait(until: Date().addingTimeInterval(pause)) { break }
            }
            let (newOnes, gone, stop, check, streams) = (added, removed, stopped, checkSessions, open)
            added.removeAll(); removed.removeAll(); woken = false; checkSessions = false
            condition.unlock()
            metrics.streams.record(streams)
            for id in gone { subscribers[id] = nil }
            if stop { return closeAll(newOnes) }
            do {
                // Commits while nobody listened did not wake the hub: its head may be behind.
                if subscribers.isEmpty && !newOnes.isEmpty { head = try reader.feedHead() }
                for subscriber in newOnes { try admit(subscriber, reader) }
                let more = try fanOut(reader)
                try catchUp(reader)
                if check || Date().timeIntervalSince(lastBeat) >= heartbeat { try beat(reader) }
                flush()
                if more { wake() }
            } catch {
                flush()
                logger.warning("live fan-out failed; retrying", metadata: ["error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.2)
                wake()
            }
        }
    }

    /// A new stream: from its cursor when the feed still holds it, else a
    /// `reset` (resync) and live from now.
    private func admit(_ subscriber: Subscriber, _ reader: DocumentReader) throws {
        subscribers[subscriber.id] = subscriber
        send(subscriber, ServerSentEvent.preamble(retryMilliseconds: 2000))
        let horizon = try reader.feedMeta().horizon
        if let since = subscriber.since {
            if since.epoch == epoch, since.seq >= horizon, since.seq <= max(head, try reader.feedHead()) {
                subscriber.position = since.seq
                return
            }
            send(subscriber, ServerSentEvent.encode(id: token(head), kind: .reset,
                                                    data: "{\"reason\":\"The cursor is older than the retained changes or from another database; sync again.\"}"))
        }
        subscriber.position = head
    }

    /// New changes for every subscriber that is live (at the hub's position).
    /// - Returns: true when a full batch was read (more may wait).
    private func fanOut(_ reader: DocumentReader) throws -> Bool {
        // Nobody is listening: move the position without reading the changes.
        guard !subscribers.isEmpty else {
            head = try reader.feedHead()
            return false
        }
        let (changes, _) = try reader.changes(after: head, limit: Self.batch)
        guard !changes.isEmpty else { return false }
        let live = subscribers.values.filter { $0.position == head }
        deliver(changes, to: live)
        head = changes.last!.seq
        for subscriber in live { subscriber.position = head }
        return changes.count == Self.batch
    }

    /// Subscribers behind the hub (resumed from an older cursor) read their
    /// own backlog up to the hub's position, about half a buffer per round,
    /// so a client that reads keeps up and one that does not is dropped.
    private func catchUp(_ reader: DocumentReader) throws {
        behind = false
        let now = ChangeFeedClock.milliseconds
        // A round reads at most `catchUpBudget` changes for all resuming
        // streams together, taking them in turn, so many clients resuming from
        // old cursors slow only themselves, not the live ones.
        var lagging = subscribers.values.filter { $0.position < head }.sorted { $0.id < $1.id }
        guard !lagging.isEmpty else { return }
        let start = catchUpTurn % lagging.count
        lagging = Array(lagging[start...] + lagging[..<start])
        catchUpTurn &+= 1
        var budget = Self.catchUpBudget
        for subscriber in lagging {
            guard budget > 0 else { behind = true; break }
            let limit = min(Self.batch, budget)
            let (changes, _) = try reader.changes(after: subscriber.position, limit: limit)
            budget -= max(changes.count, 1)
            var sent = 0, full = false
            for change in changes where change.seq <= head {
                if let bytes = event(change, ParsedChange(change), for: subscriber) {
                    send(subscriber, bytes)
                    sent += bytes.count
                    metrics.events.increment()
                    metrics.lag.recordMilliseconds(max(0, now - change.at))
                }
                subscriber.position = change.seq
                if sent >= bufferLimit / 2 { full = true; break }
            }
            // Every change up to the hub's position was read: it joins the live ones.
            if !full && (changes.count < limit || (changes.last?.seq ?? 0) > head) {
                subscriber.position = head
            }
            behind = behind || subscriber.position < head
        }
    }

    private func deliver(_ changes: [FeedChange], to subscribers: [Subscriber]) {
        guard !subscribers.isEmpty else { return }
        let now = ChangeFeedClock.milliseconds
        for change in changes {
            let parsed = ParsedChange(change)
            for subscriber in subscribers {
                guard let bytes = event(change, parsed, for: subscriber) else { continue }
                send(subscriber, bytes)
                metrics.events.increment()
                metrics.lag.recordMilliseconds(max(0, now - change.at))
            }
        }
    }

    /// The event `change` makes for `subscriber`, if any.
    private func event(_ change: FeedChange, _ parsed: ParsedChange, for subscriber: Subscriber) -> [UInt8]? {
        let topics = subscriber.subscription.topics.filter { $0.collection == change.collection }
        guard !topics.isEmpty else { return nil }
        let level = change.collection == "files" ? filesLevel : access.level(of: change.collection)
        let scope = AccessScope(principal: subscriber.principal, level: level)
        func sees(_ text: String?, _ acl: JSONObject?) -> Bool {
            guard let text, scope.canRead(acl: acl) else { return false }
            return topics.contains { probe($0.key, $0.filter)?.matches(text, id: change.id) ?? false }
        }
        let before = change.operation == .create ? false : sees(change.before, parsed.beforeACL)
        let after = change.operation == .delete ? false : sees(change.after, parsed.afterACL)
        let kind: ServerSentEvent.Kind
        switch (change.operation, before, after) {
        case (.create, _, true): kind = .create
        case (.delete, true, _): kind = .delete
        case (.update, true, true): kind = .update
        case (.update, false, true): kind = .enter
        case (.update, true, false): kind = .leave
        default: return nil
        }
        // Most subscribers see the same bytes for a change: made once per kind and view.
        let redacted = after && access.redaction(change.collection, subscriber.principal).map { !$0.fields.isEmpty && $0.exceptID != change.id } == true
        return parsed.encoded(kind, redacted: redacted) {
            let entity = after ? visibleEntity(change, parsed, for: subscriber.principal) : nil
            return ServerSentEvent.encode(id: token(change.seq), kind: kind,
                                          data: ServerSentEvent.data(collection: change.collection, id: change.id, entity: entity))
        }
    }

    /// The entity as the subscriber may see it: others' private profile fields removed.
    private func visibleEntity(_ change: FeedChange, _ parsed: ParsedChange, for principal: AccessScope.Principal) -> String? {
        guard let redaction = access.redaction(change.collection, principal), redaction.exceptID != change.id,
              var object = parsed.after, !redaction.fields.isEmpty else { return change.after }
        for field in redaction.fields { object[field] = nil }
        return object.jsonText
    }

    private func probe(_ key: String, _ filter: JSONValue) -> FilterProbe? {
        if let known = probes[key] { return known }
        guard probes.count < 10_000 else { probes.removeAll(); return probe(key, filter) }
        let made = try? reader?.probe(filter)
        probes[key] = made
        return made
    }

    private func token(_ seq: Int64) -> String {
        FeedCursor(epoch: epoch, level: "live", seq: seq, afterRowID: nil).token
    }

    /// Heartbeats, and the end of streams whose session expired or was revoked.
    private func beat(_ reader: DocumentReader) throws {
        lastBeat = Date()
        var valid: [String: Bool] = [:]
        for subscriber in subscribers.values {
            if let hash = subscriber.tokenHash {
                if valid[hash] == nil { valid[hash] = try reader.session(tokenHash: hash, now: Authenticator.now) != nil }
                if valid[hash] == false {
                    subscribers[subscriber.id] = nil
                    let stream = subscriber.stream
                    stream.loop.execute { stream.finish() }
                    continue
                }
            }
            send(subscriber, ServerSentEvent.heartbeat)
        }
    }

    /// A session was revoked (log-out): check the streams' sessions now, from any thread.
    func sessionsChanged() {
        condition.lock(); checkSessions = true; condition.signal(); condition.unlock()
    }

    /// Queues bytes for a subscriber; a round's bytes for one stream go out as one chunk.
    private func send(_ subscriber: Subscriber, _ bytes: [UInt8]) {
        let loop = subscriber.stream.loop
        if outgoing[loop.index] == nil { outgoing[loop.index] = (loop, []) }
        if let at = slot[subscriber.id] {
            outgoing[loop.index]!.1[at].1 += bytes
        } else {
            slot[subscriber.id] = outgoing[loop.index]!.1.count
            outgoing[loop.index]!.1.append((subscriber.stream, bytes))
        }
    }

    /// Hands each loop its bytes: one `execute` per loop per round.
    private func flush() {
        let limit = bufferLimit, slow = metrics.slow
        for (_, (loop, items)) in outgoing where !items.isEmpty {
            loop.execute {
                // Slow: what earlier rounds handed a stream is still unsent past the
                // limit (judged once per round, before this round's bytes).
                for (stream, bytes) in items where stream.isOpen {
                    if stream.pending > limit {
                        stream.abort()
                        slow.increment()
                        continue
                    }
                    stream.write(bytes)
                }
            }
        }
        outgoing.removeAll(keepingCapacity: true)
        slot.removeAll(keepingCapacity: true)
    }

    private func closeAll(_ pending: [Subscriber]) {
        flush()
        for subscriber in Array(subscribers.values) + pending {
            let stream = subscriber.stream
            stream.loop.execute { stream.finish() }
        }
        subscribers.removeAll()
    }
}

/// The `_acl`s (and the committed entity) of a change, parsed once for all
/// subscribers, and its encoded events, made once per kind and view.
final class ParsedChange {
    let beforeACL: JSONObject?
    let after: JSONObject?
    var afterACL: JSONObject? { after?["_acl"]?.objectValue }
    private var events: [String: [UInt8]] = [:]

    init(_ change: FeedChange) {
        beforeACL = change.before.flatMap { (try? JSONParser.parse($0))?.objectValue?["_acl"]?.objectValue }
        after = change.after.flatMap { (try? JSONParser.parse($0))?.objectValue }
    }

    func encoded(_ kind: ServerSentEvent.Kind, redacted: Bool, _ make: () -> [UInt8]) -> [UInt8] {
        let key = kind.rawValue + (redacted ? "/redacted" : "")
        if let known = events[key] { return known }
        let bytes = make()
        events[key] = bytes
        return bytes
    }
}

enum ChangeFeedClock {
    static var milliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
