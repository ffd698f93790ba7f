import CEvent
import Foundation
import Jobs

/// One libevent `event_base` run by one thread.
///
/// Other threads hand work to the loop with `execute`: the closure joins a
/// locked inbox and one persistent user event is activated, so a burst of
/// completions costs one wake-up. The loop itself never blocks on disk or CPU.
///
/// `@unchecked Sendable`: the base and events are touched only on the loop's
/// thread, except `event_active` and `event_base_loopexit`, which libevent makes
/// thread-safe once `evthread_use_pthreads` has run.
public final class EventLoop: @unchecked Sendable {
    let base: OpaquePointer
    private var wakeEvent: OpaquePointer?
    private var tickEvent: OpaquePointer?
    private var signalEvents: [OpaquePointer] = []
    private var signalHandlers: [Int32: () -> Void] = [:]
    private var tickHandlers: [() -> Void] = []
    /// A zero-timeout timer: work queued by `nextTurn` runs after the events ready now.
    private var turnEvent: OpaquePointer?
    private var nextTurnWork: [() -> Void] = []
    private let inboxLock = AdaptiveLock()
    private var inbox: [() -> Void] = []
    private var thread: pthread_t?
    public let index: Int

    /// Makes libevent thread-aware; must precede every `event_base_new`.
    private static let threading: Void = {
        evthread_use_pthreads()
        signal(SIGPIPE, SIG_IGN)
        // A parent may have spawned us with signals blocked (Foundation's
        // Process does); unblock the ones the daemon acts on.
        var set = sigset_t()
        sigemptyset(&set)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, s) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }()

    /// Process-wide set-up for libevent threads and signals; idempotent.
    /// Call before starting any other thread.
    public static func prepareProcess() { _ = threading }

    public init(index: Int) {
        _ = Self.threading
        // With the changelist, epoll_ctl calls wait for the next epoll_wait and
        // collapse per descriptor: evhttp turns reading and writing on and off
        // around every request, which otherwise costs about four calls each.
        let config = event_config_new()
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        guard let base = event_base_new_with_config(config) else { fatalError("event_base_new_with_config failed") }
        event_config_free(config)
        self.base = base
        self.index = index
        let context = Unmanaged.passUnretained(self).toOpaque()
        wakeEvent = event_new(base, -1, 0, { _, _, ctx in
            Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue().drainInbox()
        }, context)
        // A once-a-second tick keeps the loop alive with no sockets and drives timers.
        tickEvent = event_new(base, -1, Int16(EV_PERSIST), { _, _, ctx in
            let loop = Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue()
            for handler in loop.tickHandlers { handler() }
        }, context)
        var second = timeval(tv_sec: 1, tv_usec: 0)
        event_add(tickEvent, &second)
        turnEvent = event_new(base, -1, 0, { _, _, ctx in
            Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue().runNextTurn()
        }, context)
    }

    deinit {
        for e in signalEvents { event_free(e) }
        if let wakeEvent { event_free(wakeEvent) }
        if let tickEvent { event_free(tickEvent) }
        if let turnEvent { event_free(turnEvent) }
        event_base_free(base)
    }

    /// Runs the loop on the calling thread until `stop`.
    public func run() {
        thread = pthread_self()
        event_base_dispatch(base)
    }

    /// Asks the loop to return from `run` after the current iteration. Any thread.
    public func stop() { event_base_loopexit(base, nil) }

    /// True on the thread running this loop.
    public var inLoop: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs `work` on the loop thread, soon. Safe from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        inboxLock.lock()
        let wasEmpty = inbox.isEmpty
        inbox.append(work)
        inboxLock.unlock()
        if wasEmpty { event_active(wakeEvent, 0, 0) }
    }

    private func drainInbox() {
        inboxLock.lock()
        let work = inbox
        inbox.removeAll(keepingCapacity: true)
        inboxLock.unlock()
        for w in work { w() }
    }

    /// Runs `work` on this loop's next turn: after the events that are ready
    /// now (requests that came meanwhile go first), not before the loop has
    /// looked at its sockets again. Long work done in slices, one per turn,
    /// never holds a request up for more than a slice. On the loop thread only.
    public func nextTurn(_ work: @escaping () -> Void) {
        nextTurnWork.append(work)
        guard nextTurnWork.count == 1 else { return }
        var now = timeval(tv_sec: 0, tv_usec: 0)
        event_add(turnEvent, &now)
    }

    private func runNextTurn() {
        let work = nextTurnWork
        nextTurnWork.removeAll(keepingCapacity: true)
        for w in work { w() }
    }

    /// Calls `handler` on this loop when `signo` arrives. Call before `run`.
    public func onSignal(_ signo: Int32, _ handler: @escaping () -> Void) {
        signalHandlers[signo] = handler
        let context = Unmanaged.passUnretained(self).toOpaque()
        // evsignal_new is a macro; this is what it expands to.
        let event = event_new(base, signo, Int16(EV_SIGNAL | EV_PERSIST), { fd, _, ctx in
            let loop = Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue()
            loop.signalHandlers[Int32(fd)]?()
        }, context)!
        event_add(event, nil)
        signalEvents.append(event)
    }

    /// Calls `handler` on this loop about once a second. Call before `run`.
    public func onTick(_ handler: @escaping () -> Void) { tickHandlers.append(handler) }
}
