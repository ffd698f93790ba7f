import Store

/// Catching up: streams behind the hub read their own backlog from the feed,
/// taking turns within one budget per round, before they join the live ones.
extension LiveHub {
    /// Subscribers behind the hub (resumed from an older cursor, or paused
    /// for room) read their own backlog up to the hub's position, as much as
    /// fits in their buffer per round, so a client that reads keeps up and
    /// one that takes nothing is dropped.
    func catchUp(_ reader: any FeedReading) throws {
        behind = false
        let now = ChangeFeedClock.milliseconds
        // A round reads at most `catchUpBudget` changes for all resuming
        // streams together, taking them in turn, so many clients resuming from
        // old cursors slow only themselves, not the live ones.
        var lagging = subscribers.values.filter { $0.position < head }.sorted { $0.id < $1.id }
        guard !lagging.isEmpty else { window = (0, []); return }
        let start = catchUpTurn % lagging.count
        lagging = Array(lagging[start...] + lagging[..<start])
        catchUpTurn &+= 1
        var budget = Self.catchUpBudget
        for subscriber in lagging {
            // Full: nothing to read until its client takes some.
            if subscriber.held >= bufferLimit / 2 {
                behind = waitForRoom(subscriber, for: bufferLimit / 2) || behind
                continue
            }
            guard budget > 0 else { behind = true; break }
            // From the last read when it covers this stream's position, else a
            // read of about `readAheadBytes` of states, which becomes the window.
            let changes: ArraySlice<FeedChange>, limit: Int
            if let last = window.changes.last, window.after <= subscriber.position, subscriber.position < last.seq,
               let first = window.changes.firstIndex(where: { $0.seq > subscriber.position }) {
                (changes, limit) = (window.changes[first...], 0)   // 0: it joins the live ones after a read that reaches the head
            } else {
                limit = min(budget, Self.readLimit(max(largestChange, 2 * subscriber.lastEventBytes), Self.readAheadBytes))
                let read = try reader.changes(after: subscriber.position, limit: limit).changes
                window = (subscriber.position, read)
                changes = read[...]
            }
            budget -= max(changes.count, 1)
            var full: Int?   // the size of the event that did not fit
            for change in changes where change.seq <= head {
                let parsed = parsed(change)
                switch event(change, parsed, for: subscriber.view) {
                case .none: break
                case .overBudget:
                    resync(subscriber, at: change.seq)
                case .rolesChanged:
                    resync(subscriber, at: change.seq, rolesChanged: true)
                case .event(let bytes):
                    subscriber.lastEventBytes = bytes.count
                    guard fits(subscriber, bytes.count) else { full = bytes.count; break }
                    send(subscriber, bytes)
                    metrics.events.increment()
                    metrics.lag.recordMilliseconds(max(0, now - change.at))
                }
                if full != nil || subscriber.ending { break }
                subscriber.position = change.seq
            }
            if subscriber.ending { continue }
            if let full {
                behind = waitForRoom(subscriber, for: full) || behind
                continue
            }
            // Every change up to the hub's position was read: it joins the live ones.
            if changes.count < limit || (changes.last?.seq ?? 0) > head {
                subscriber.position = head
            }
            behind = behind || subscriber.position < head
        }
    }
}
