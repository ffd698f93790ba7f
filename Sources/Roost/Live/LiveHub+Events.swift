import EventLoop
import JSON
import Store

/// Which event a change makes for a view's subscribers. Decided in memory:
/// access from the entity's `_acl` and the collection's level, the view's
/// filters by `FilterMatcher` on the parsed entity (each distinct filter
/// once per change, see `LiveFilter.verdict`). Once per view, never per
/// subscriber, and no SQL.
extension LiveHub {
    /// What a change makes for a view's subscribers.
    enum Outcome {
        /// Nothing it may see or asked for.
        case none
        /// An event, encoded once per kind and view and shared by every subscriber that gets it.
        case event(SharedBytes)
        /// Its filter ran past its budget on this change: it is told to resync.
        case overBudget
        /// The subscriber's roles changed (a `_roles` feed entry for its user):
        /// what it may read changed, so it is told to resync.
        case rolesChanged
    }

    /// The change-feed name of role membership changes (an entry per user
    /// whose roles changed, id = the user's id; never a client collection).
    static let roleChanges = "_roles"

    /// The event `change` makes for every subscriber of `view`, if any.
    func event(_ change: FeedChange, _ parsed: ParsedChange, for view: LiveView) -> Outcome {
        if change.collection == Self.roleChanges {
            return view.account != nil && view.account == change.id ? .rolesChanged : .none
        }
        let topics = view.topicFilters
        guard topics.contains(where: { $0.collection == change.collection }) else { return .none }
        let scope = view.scope(in: change.collection, level: parsed.level, rules: parsed.rules)
        func sees(after: Bool) -> LiveFilter.Verdict {
            guard parsed.readable(by: scope, after: after) else { return .noMatch }
            var verdict = LiveFilter.Verdict.noMatch
            for topic in topics where topic.collection == change.collection {
                switch topic.filter?.verdict(parsed, after: after) ?? .noMatch {
                case .match: return .match
                case .overBudget: verdict = .overBudget
                case .noMatch: break
                }
            }
            return verdict
        }
        let before = change.operation == .create ? LiveFilter.Verdict.noMatch : sees(after: false)
        if before == .overBudget { return .overBudget }
        let after = change.operation == .delete ? LiveFilter.Verdict.noMatch : sees(after: true)
        if after == .overBudget { return .overBudget }
        let kind: ServerSentEvent.Kind
        switch (change.operation, before == .match, after == .match) {
        case (.create, _, true): kind = .create
        case (.delete, true, _): kind = .delete
        case (.update, true, true): kind = .update
        case (.update, false, true): kind = .enter
        case (.update, true, false): kind = .leave
        default: return .none
        }
        // Most subscribers see the same bytes for a change: made once per kind and view.
        let visible = after == .match
        let redacted = visible && access.redaction(change.collection, view.principal).map { !$0.fields.isEmpty && $0.exceptID != change.id } == true
        return .event(parsed.encoded(kind, redacted: redacted) {
            let entity = visible ? visibleEntity(change, parsed, for: view.principal) : nil
            return ServerSentEvent.encode(id: token(change.seq), kind: kind,
                                          data: ServerSentEvent.data(collection: change.collection, id: change.id, entity: entity))
        })
    }

    /// The `reset` that ends a stream whose filter ran past its budget on
    /// change `seq`: its id is that change's, so the client resumes after it
    /// (and resyncs with `_deltaset`, where a list's own limits apply).
    func overBudgetReset(_ seq: Int64) -> SharedBytes {
        SharedBytes(ServerSentEvent.encode(id: token(seq), kind: .reset, data: """
            {"reason":"Matching a change against this stream's query took more than its budget (\(LiveBudget.stepsPerFilter) steps, \(LiveBudget.stepsPerChange) per change for all streams); sync again."}
            """))
    }

    /// The `reset` that ends a stream whose user's roles changed at change `seq`.
    func rolesChangedReset(_ seq: Int64) -> SharedBytes {
        SharedBytes(ServerSentEvent.encode(id: token(seq), kind: .reset, data: """
            {"reason":"Your roles changed, so what you may read may have changed; sync again (an older _deltaset cursor answers 410)."}
            """))
    }

    /// The entity as the subscriber may see it: others' private profile fields removed.
    func visibleEntity(_ change: FeedChange, _ parsed: ParsedChange, for principal: AccessScope.Principal) -> String? {
        guard let redaction = access.redaction(change.collection, principal), redaction.exceptID != change.id,
              var object = parsed.after, !redaction.fields.isEmpty else { return change.after }
        for field in redaction.fields { object[field] = nil }
        return object.jsonText
    }

    /// A topic's filter, compiled once per distinct filter text (hub thread only).
    func filter(_ topic: LiveSubscription.Topic) -> LiveFilter? {
        if let known = filters[topic.key] { return known }
        if filters.count >= 10_000 { filters.removeAll() } // subscribers keep theirs
        let made = LiveFilter.make(topic.filter, reader)
        if let made, !made.inMemory {
            logger.notice("live filter evaluated by the SQL probe", metadata: ["filter": "\(topic.key.prefix(80))"])
        }
        filters[topic.key] = .some(made)
        return made
    }

    /// A change parsed once for every subscriber, with its collection's
    /// level and rules (settings lookups: once per change, not per subscriber).
    func parsed(_ change: FeedChange) -> ParsedChange {
        let files = change.collection == "files"
        return ParsedChange(change, level: files ? filesLevel : access.level(of: change.collection),
                            rules: access.rules(of: change.collection))
    }
}
