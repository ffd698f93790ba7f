import CEvent

/// A repeating timer on one loop; `cancel` (or the loop's end) stops it.
public final class LoopTimer: @unchecked Sendable {
    fileprivate var event: OpaquePointer?
    fileprivate let handler: () -> Void

    fileprivate init(handler: @escaping () -> Void) { self.handler = handler }

    /// Stops and frees the timer. Call on the loop thread, or after the loop
    /// has stopped, and before the loop is freed.
    public func cancel() {
        guard let event else { return }
        event_del(event)
        event_free(event)
        self.event = nil
    }
}

extension EventLoop {
    /// Calls `handler` on this loop every `interval` (the watchdog's timer).
    /// Call before `run` or on the loop thread; keep the timer and `cancel` it.
    public func every(_ interval: Duration, _ handler: @escaping () -> Void) -> LoopTimer {
        let timer = LoopTimer(handler: handler)
        let context = Unmanaged.passUnretained(timer).toOpaque()
        timer.event = event_new(base, -1, Int16(EV_PERSIST), { _, _, ctx in
            Unmanaged<LoopTimer>.fromOpaque(ctx!).takeUnretainedValue().handler()
        }, context)
        let (seconds, attoseconds) = interval.components
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        event_add(timer.event, &tv)
        return timer
    }
}
