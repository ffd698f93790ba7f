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
    /// ``OfflineStore/liveUpdates(_:)``. Each carries which entities have
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
                    continuation.yield(try await findReportingFailures(query))
                    for await _ in changes {
                        continuation.yield(try await findReportingFailures(query))
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
