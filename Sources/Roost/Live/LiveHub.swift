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
/// ever waits on a client. A stream never holds more than `bufferLimit`
/// bytes (counted as they are queued: this round's, those on their way to
/// the loop and those unsent in the connection): a subscriber whose next
/// event does not fit stops at the change before it and catches up from the
/// feed as its client reads; one whose client takes nothing for a while is
/// dropped, and resumes with `Last-Event-ID`. Matching has a budget per
/// filter and per change (`LiveBudget`); a stream whose query runs past it
/// is told to resync.
///
/// Every subscriber has a feed position: it gets exactly the changes after
/// it, in commit order. A new stream that resumes from an older position
/// catches up from the feed on this thread before it joins the live ones.
final class LiveHub: @unchecked Sendable {
    let engine: any StoreEngine
    let access: AccessPolicy
    let filesLevel: AccessScope.Level
    let heartbeat: Double
    let bufferLimit: Int
    let maxStreams: Int
    let maxPerAddress: Int
    let maxPerAccount: Int
    let logger: Logger
    let metrics = RoostMetrics.live()

    // Guarded by `condition`.
    let condition = NSCondition()
    private var added: [Subscriber] = []
    private var removed: [Int] = []
    private var woken = false
    var stopped = false
    private var nextID = 0
    var open = 0
    /// Open (or opening) streams per client address, for `maxPerAddress`.
    var openByAddress: [String: Int] = [:]
    /// Open (or opening) streams per signed-in user, for `maxPerAccount`.
    var openByAccount: [String: Int] = [:]
    private var checkSessions = false
    /// Flushes the loops are still writing: the next round waits for them,
    /// and then rests in proportion to how long they took (`LiveBudget.restPerWrite`),
    /// so the commits made meanwhile go out together.
    var writing = 0
    /// When the loops began writing what they write now.
    var writeStarted = Date()
    /// The next round does not start before this (once the loops are done).
    var restUntil = Date.distantPast
    private var stoppedAt: Date?
    /// Streams open when `shutdown` came (0: nothing to let leave).
    private var openAtStop = 0
    /// Some subscriber is catching up: come back soon (hub thread only).
    var behind = false
    /// When the hub last handed the loops their bytes (hub thread only).
    var lastFlush = Date()

    // Hub thread only.
    var subscribers: [Int: Subscriber] = [:]
    var head: Int64 = 0
    private(set) var epoch = ""
    private var seal: CursorSeal?
    private var tokens: [Int64: String] = [:]
    /// Each distinct filter (by its JSON text), compiled once: see `LiveFilter`.
    var filters: [String: LiveFilter?] = [:]
    /// What subscribers see, by `LiveView.key`: each change is judged once per view.
    var views: [String: LiveView] = [:]
    /// Subscribers with bytes `buffered` since the last flush.
    var dirty: [Subscriber] = []
    var lastBeat = Date()
    private(set) var reader: (any DocumentReading)?
    /// Which resuming stream goes first next round (they take turns).
    var catchUpTurn = 0

    /// Changes per round: small enough that loops get bytes while the next round is built.
    static let batch = 200
    /// Changes read per round for all streams that are catching up.
    static let catchUpBudget = 1000
    /// Bytes of entity states one read of the feed may bring in, about: a
    /// round of big changes reads fewer of them (see `readLimit`).
    static let roundBytes = 16 << 20
    /// The largest change (its states' bytes) in the hub's last read: the next read takes fewer when it was big.
    var largestChange = 0
    /// Bytes of entity states a catch-up read brings in, about; kept (`window`) for the next rounds.
    static let readAheadBytes = 8 << 20
    /// The last catch-up read: every change after `after` up to its last, shared
    /// by all streams catching up through that stretch (rebuilding big
    /// entities' states from the feed costs more than keeping them).
    var window: (after: Int64, changes: [FeedChange]) = (0, [])

    init(engine: any StoreEngine, access: AccessPolicy, filesLevel: AccessScope.Level, config: RoostConfig, logger: Logger) {
        self.engine = engine
        self.access = access
        self.filesLevel = filesLevel
        heartbeat = Double(config.liveHeartbeat)
        bufferLimit = config.liveBufferBytes
        maxStreams = config.liveMaxConnections
        maxPerAddress = config.liveMaxPerAddress
        maxPerAccount = config.liveMaxPerAccount
        self.logger = logger
    }

    func start() throws {
        let reader = try engine.openReader(role: "live")
        epoch = try reader.feedMeta().epoch
        seal = try reader.cursorSeal()
        head = try reader.feedHead()
        self.reader = reader
        NamedThread.start("live-fanout") { [self] in run(self.reader!) }
    }

    /// Adds a started stream (on its loop); it is removed when it closes.
    func add(stream: ResponseStream, principal: AccessScope.Principal, roles: [String], tokenHash: String?,
             subscription: LiveSubscription, since: FeedCursor?, openedAt: Int64?, address: String) {
        condition.lock()
        nextID += 1
        let subscriber = Subscriber(id: nextID, stream: stream, principal: principal, roles: roles, tokenHash: tokenHash,
                                    subscription: subscription, since: since, openedAt: openedAt, address: address,
                                    account: principal.userID)
        added.append(subscriber)
        condition.signal()
        condition.unlock()
        stream.setOnClose { [self] in
            condition.lock()
            removed.append(subscriber.id)
            released(address: subscriber.address, account: subscriber.account)
            condition.signal()
            condition.unlock()
        }
        // Its client read enough to make room: serve it again now, not at the next round.
        stream.setOnDrain { [self] in wake() }
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
        condition.lock(); stopped = true; stoppedAt = Date(); openAtStop = open; condition.signal(); condition.unlock()
    }

    /// After `shutdown`: every stream has ended and its last chunk had a
    /// moment to leave (none to wait for when no stream was open).
    var drained: Bool {
        condition.lock(); defer { condition.unlock() }
        return open == 0 && (openAtStop == 0 || Date().timeIntervalSince(stoppedAt ?? .distantPast) > 0.3)
    }

    // MARK: - The fan-out thread

    private func run(_ reader: any FeedReading & AccountsReading) {
        while true {
            condition.lock()
            // A subscriber catching up is served again after a short pause, so its loop can send what it got.
            let pause = behind ? 0.005 : 1
            while !woken && added.isEmpty && removed.isEmpty && !stopped {
                if !condition.wait(until: Date().addingTimeInterval(pause)) { break }
            }
            // While the loops still write the last round, and rest after it,
            // the commits made meanwhile gather for the next one: a round per
            // commit would cost every stream a write per commit, and take the
            // loops from the requests that make the next commits.
            let until = Date().addingTimeInterval(LiveBudget.longestGather)
            while added.isEmpty && !stopped && (writing > 0 || restUntil > Date()) && Date() < until {
                _ = condition.wait(until: writing > 0 ? until : min(restUntil, until))
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
    private func admit(_ subscriber: Subscriber, _ reader: any FeedReading & AccountsReading) throws {
        if try sessionEndedBeforeAdmission(subscriber, reader) { return }
        subscribers[subscriber.id] = subscriber
        subscriber.view = view(of: subscriber)
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
        // No cursor: live from the feed's head when the stream was accepted
        // (its headers had not gone out yet), so nothing committed after the
        // client saw it open is missed; the catch-up sends what came between.
        if let openedAt = subscriber.openedAt, openedAt >= horizon, openedAt <= head {
            subscriber.position = openedAt
            return
        }
        subscriber.position = head
    }

    /// New changes for every subscriber that is live (at the hub's position).
    /// - Returns: true when a full batch was read (more may wait).
    private func fanOut(_ reader: any FeedReading) throws -> Bool {
        // Nobody is listening: move the position without reading the changes.
        guard !subscribers.isEmpty else {
            head = try reader.feedHead()
            return false
        }
        let limit = Self.readLimit(largestChange, Self.roundBytes)
        let (changes, _) = try reader.changes(after: head, limit: limit)
        largestChange = changes.reduce(0) { max($0, Self.bytes(of: $1)) }
        guard !changes.isEmpty else { return false }
        let live = subscribers.values.filter { $0.position == head }
        let paused = deliver(changes, to: live, from: head)
        head = changes.last!.seq
        for subscriber in live where !paused.contains(subscriber.id) { subscriber.position = head }
        return changes.count == limit
    }

    /// Changes to read when the largest change lately held `largest` bytes
    /// and `room` bytes are wanted: up to `batch`, at least one.
    static func readLimit(_ largest: Int, _ room: Int) -> Int {
        largest <= 0 ? batch : min(batch, max(1, room / largest))
    }

    /// The bytes of a change's entity states, as read from the feed.
    static func bytes(of change: FeedChange) -> Int {
        (change.before?.utf8.count ?? 0) + (change.after?.utf8.count ?? 0)
    }

    /// The event id of position `seq`: sealed once and kept a while, so every
    /// stream gets the same id for a change (hub thread only).
    func token(_ seq: Int64) -> String {
        if let known = tokens[seq] { return known }
        if tokens.count >= 4096 { tokens.removeAll(keepingCapacity: true) }
        let made = seal!.token(FeedCursor(epoch: epoch, level: "live", seq: seq, afterRowID: nil))
        tokens[seq] = made
        return made
    }

    /// A session was revoked (log-out): check the streams' sessions now, from any thread.
    func sessionsChanged() {
        condition.lock(); checkSessions = true; condition.signal(); condition.unlock()
    }
}
