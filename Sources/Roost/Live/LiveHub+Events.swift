import JSON
import Store

/// Which event a change makes for a subscriber. Decided in memory: access
/// from the entity's `_acl` and the collection's level, the subscriber's
/// filters by `FilterMatcher` on the parsed entity (each distinct filter
/// once per change, see `ParsedChange.matches`). No SQL per subscriber.
extension LiveHub {
    /// The event `change` makes for `subscriber`, if any.
    func event(_ change: FeedChange, _ parsed: ParsedChange, for subscriber: Subscriber) -> [UInt8]? {
        let topics = subscriber.topicFilters
        guard topics.contains(where: { $0.collection == change.collection }) else { return nil }
        let scope = AccessScope(principal: subscriber.principal, level: parsed.level)
        func sees(after: Bool) -> Bool {
            guard (after ? change.after : change.before) != nil, scope.canRead(acl: after ? parsed.afterACL : parsed.beforeACL) else { return false }
            return topics.contains { $0.collection == change.collection && $0.filter?.matches(parsed, after: after) == true }
        }
        let before = change.operation == .create ? false : sees(after: false)
        let after = change.operation == .delete ? false : sees(after: true)
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

    /// The access level of `collection` (a settings lookup: once per change, not per subscriber).
    func level(of collection: String) -> AccessScope.Level {
        collection == "files" ? filesLevel : access.level(of: collection)
    }
}
