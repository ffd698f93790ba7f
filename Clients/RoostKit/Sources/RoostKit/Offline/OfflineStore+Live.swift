import Foundation

extension OfflineStore {
    /// The live changes of every mirror on one connection (`GET /events`),
    /// each applied to its mirror before it is yielded. The last event applied
    /// is saved in the store, so the next launch resumes after it
    /// (`Last-Event-ID`) without a resync.
    ///
    /// ```swift
    /// for try await event in store.liveUpdates() { … }   // the mirrors follow the server
    /// ```
    public nonisolated func liveUpdates(reconnect: ReconnectPolicy = ReconnectPolicy()) -> AsyncThrowingStream<LiveEvent, Error> {
        let subscriptions = mirrors.values.sorted { $0.name < $1.name }
        let stream = "events:" + subscriptions.map { "\($0.name)\($0.filter?.json ?? "")" }.joined(separator: ",")
        let client = self.client
        return follow(stream) { client.live(subscriptions, lastEventID: $0, reconnect: reconnect) }
    }

    /// The live changes of one mirrored collection (`GET /:collection/_live`),
    /// each applied to the mirror before it is yielded; resumes after the last
    /// event applied, across launches, like ``liveUpdates(reconnect:)``.
    public nonisolated func liveUpdates(_ collection: String, reconnect: ReconnectPolicy = ReconnectPolicy()) -> AsyncThrowingStream<LiveEvent, Error> {
        let filter = mirrors[collection]?.filter
        let client = self.client
        return follow("live:\(collection)\(filter?.json ?? "")") {
            client.live(collection, filter: filter, lastEventID: $0, reconnect: reconnect)
        }
    }

    private nonisolated func follow(_ stream: String, _ open: @escaping @Sendable (String?) -> LiveEvents) -> AsyncThrowingStream<LiveEvent, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in open(try await self.lastEventID(stream)) {
                        try await self.apply(event, stream: stream)
                        continuation.yield(event)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The last live event applied from `stream`, if any.
    func lastEventID(_ stream: String) throws -> String? {
        try db.query("SELECT last_event_id FROM live_state WHERE stream = ?", [.text(stream)]).first?[0].text
    }

    /// Applies one event and remembers it as the stream's resume point.
    func apply(_ event: LiveEvent, stream: String) async throws {
        if event.kind == .reset, mirrors[event.collection] == nil {
            // A multiplexed stream that cannot resume: every mirror resyncs.
            for mirror in mirrors.values {
                try await apply(LiveEvent(id: event.id, kind: .reset, collection: mirror.name, entityID: "", entity: nil))
            }
        } else {
            try await apply(event)
        }
        if let id = event.id {
            try db.execute("INSERT OR REPLACE INTO live_state (stream, last_event_id) VALUES (?, ?)", [.text(stream), .text(id)])
        }
    }
}
