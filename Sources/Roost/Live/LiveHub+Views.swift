import Foundation
import Jobs
import Store

/// A round's delivery by view: each change is judged once for every view
/// (`LiveView`: the same topics asked by the same caller), then queued to the
/// view's subscribers. Hub thread only.
extension LiveHub {
    /// Builds every live subscriber's events for `changes` (the feed after
    /// `start`), each subscriber within its buffer: one whose next event does
    /// not fit stops at the change before it and catches up later. Each
    /// change is judged once per view (`LiveView`), then queued to the view's
    /// subscribers. The lag histogram takes one sample per change delivered;
    /// the events counter is bumped once per round. What is built goes out
    /// every `LiveBudget.flushInterval`, not only at the round's end.
    /// - Returns: the ids of the subscribers that stopped short.
    func deliver(_ changes: [FeedChange], to subscribers: [Subscriber], from start: Int64) -> Set<Int> {
        guard !subscribers.isEmpty else { return [] }
        let now = ChangeFeedClock.milliseconds
        var sent = 0
        var paused: Set<Int> = []
        var previous = start
        let groups = Self.byView(subscribers)
        var giveWay = GiveWay()  // a change for a thousand streams takes a while: the loops come first
        for change in changes {
            let parsed = parsed(change)
            let before = sent
            for (view, members) in groups {
                // A view whose streams all stopped spends no budget.
                guard members.contains(where: { !$0.ending && !paused.contains($0.id) }) else { continue }
                let outcome = event(change, parsed, for: view)
                if case .none = outcome { continue }
                for subscriber in members where !subscriber.ending && !paused.contains(subscriber.id) {
                    giveWay.check()
                    switch outcome {
                    case .none: continue
                    case .overBudget: resync(subscriber, at: change.seq)
                    case .rolesChanged: resync(subscriber, at: change.seq, rolesChanged: true)
                    case .event(let bytes):
                        subscriber.lastEventBytes = bytes.count
                        guard fits(subscriber, bytes.count) else {
                            paused.insert(subscriber.id)
                            subscriber.position = previous
                            continue
                        }
                        send(subscriber, bytes)
                        sent += 1
                    }
                }
            }
            if sent > before { metrics.lag.recordMilliseconds(max(0, now - change.at)) }
            previous = change.seq
            if Date().timeIntervalSince(lastFlush) >= LiveBudget.flushInterval { flush() }
        }
        if sent > 0 { metrics.events.increment(by: Int64(sent)) }
        return paused
    }

    /// `subscribers` by view, cheap views first (a costly filter cannot use
    /// up a change's budget before them), each view's in id order.
    static func byView(_ subscribers: [Subscriber]) -> [(view: LiveView, members: [Subscriber])] {
        var index: [ObjectIdentifier: Int] = [:]
        var groups: [(view: LiveView, members: [Subscriber])] = []
        for subscriber in subscribers.sorted(by: { $0.id < $1.id }) {
            let key = ObjectIdentifier(subscriber.view)
            if let at = index[key] {
                groups[at].members.append(subscriber)
            } else {
                index[key] = groups.count
                groups.append((subscriber.view, [subscriber]))
            }
        }
        return groups.sorted { ($0.view.cost, $0.members[0].id) < ($1.view.cost, $1.members[0].id) }
    }

    /// The view a new subscriber belongs to (made on first use).
    func view(of subscriber: Subscriber) -> LiveView {
        let key = LiveView.key(principal: subscriber.principal, roles: subscriber.roles, subscription: subscriber.subscription)
        if let known = views[key] { return known }
        // Forget the views no stream holds any more, now and then.
        if views.count >= 2 * subscribers.count + 64 {
            views = Dictionary(subscribers.values.compactMap { $0.view }.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        }
        let made = LiveView(key: key, principal: subscriber.principal, roles: subscriber.roles,
                            topicFilters: subscriber.subscription.topics.map { ($0.collection, filter($0)) })
        views[key] = made
        return made
    }
}
