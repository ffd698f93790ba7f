import Foundation

extension OfflineStore {
    /// Signals every observer of `collection` that its local copies changed.
    /// Called inside the actor's synchronous work, so an observer's next read
    /// (a later turn of the actor) sees the committed change. Signals coalesce.
    func changed(_ collection: String) {
        for observer in observers.values where observer.collection == collection { observer.signal.yield() }
    }

    func observe(_ collection: String) -> (UUID, AsyncStream<Void>) {
        let (stream, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        observers[key] = (collection, signal)
        return (key, stream)
    }

    func stopObserving(_ key: UUID) {
        observers.removeValue(forKey: key)?.signal.finish()
    }

    /// The ids in `collection` with writes not yet sent.
    func pendingIDs(_ collection: String) throws -> Set<String> {
        Set(try db.query("SELECT DISTINCT id FROM outbox WHERE collection = ?", [.text(collection)]).compactMap { $0[0].text })
    }
}

extension OfflineCollection {
    /// The local results of `query` now, then again after every change to the
    /// collection's local copies: local writes, sync (sent writes, pulled
    /// changes, resolved conflicts) and live events applied by
    /// ``OfflineStore/liveUpdates(_:)``; a change that leaves the results as
    /// they were yields nothing. Each carries which entities have
    /// writes not yet sent (``LocalResults/hasPendingWrites(_:)``). Changes
    /// that come faster than the consumer reads are coalesced into one update.
    ///
    /// ```swift
    /// for try await results in store.collection("notes", of: Note.self).results(Query().sorted(by: "title")) {
    ///     render(results.entities, pending: results.pendingIDs)
    /// }
    /// ```
    public func results(_ query: Query = Query()) -> AsyncThrowingStream<LocalResults<Model>, Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                let (key, changes) = await store.observe(name)
                do {
                    // Yield now, then only when the documents or their pending state changed.
                    var last = try await store.findWithPending(name, query)
                    continuation.yield(decode(last.0, pending: last.1))
                    for await _ in changes {
                        let next = try await store.findWithPending(name, query)
                        if next.0 == last.0, next.1 == last.1 { continue }
                        last = next
                        continuation.yield(decode(next.0, pending: next.1))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
                await store.stopObserving(key)
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
