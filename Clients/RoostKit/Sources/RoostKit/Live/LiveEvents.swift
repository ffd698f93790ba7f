import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A collection's (or query's) changes as they happen: an `AsyncSequence`
/// over the server's event stream (`GET /:collection/_live`).
///
/// When the connection drops (network change, server restart) it reconnects
/// by itself, waiting a little longer each time, and resumes with
/// `Last-Event-ID` so no event is missed; a ``LiveEvent/Kind/reset`` event
/// means the server could not resume and the app should resync. It ends with
/// an error only when the server refuses the subscription (bad query, no
/// rights, no such endpoint). Cancelling the iterating task closes it.
///
/// ```swift
/// for try await event in roost.live("messages") {
///     print(event.kind, event.entityID)
/// }
/// ```
public struct LiveEvents: AsyncSequence, Sendable {
    /// Each change as it commits.
    public typealias Element = LiveEvent

    let client: RoostClient
    /// `[collection, "_live"]`, or `["events"]` for several collections on one stream.
    let path: [String]
    let parameters: [(String, String)]
    /// The collection of events that do not name theirs.
    let collection: String
    let lastEventID: String?
    let reconnect: ReconnectPolicy

    public func makeAsyncIterator() -> AsyncThrowingStream<LiveEvent, Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream<LiveEvent, Error>.makeStream()
        let task = Task { [self] in await run(continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }

    /// Connects, reads, and reconnects until cancelled or refused for good.
    /// ``RoostClient/reconnectLiveStreams()`` drops the current connection (or
    /// cuts the backoff short) and reconnects at once.
    private func run(_ continuation: AsyncThrowingStream<LiveEvent, Error>.Continuation) async {
        let lastID = Locked(lastEventID)
        let delay = Locked(reconnect.initialDelay)
        let current = Locked<Task<Bool, Never>?>(nil)
        let nudged = Locked(false)
        let key = client.onReconnect { nudged.set(true); current.value?.cancel() }
        defer { client.removeReconnectHandler(key) }
        while !Task.isCancelled {
            let connection = Task { await connect(lastID: lastID, delay: delay, continuation) }
            current.set(connection)
            let refused = await withTaskCancellationHandler { await connection.value } onCancel: { connection.cancel() }
            if refused { return }
            if Task.isCancelled { break }
            if nudged.update({ (flag: inout Bool) -> Bool in defer { flag = false }; return flag }) { delay.set(reconnect.initialDelay); continue }
            let wait = delay.value
            let sleeper = Task { () -> Bool in (try? await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))) != nil }
            current.set(sleeper)
            if nudged.value { sleeper.cancel() }
            _ = await withTaskCancellationHandler { await sleeper.value } onCancel: { sleeper.cancel() }
            if nudged.update({ (flag: inout Bool) -> Bool in defer { flag = false }; return flag }) { delay.set(reconnect.initialDelay) }
            else { delay.set(Swift.min(wait * 2, reconnect.maximumDelay)) }
        }
        continuation.finish()
    }

    /// One connection: returns true when the server refused the subscription
    /// for good (the stream is finished with its error), false to reconnect.
    private func connect(lastID: Locked<String?>, delay: Locked<Double>,
                         _ continuation: AsyncThrowingStream<LiveEvent, Error>.Continuation) async -> Bool {
        do {
            var request = client.request("GET", path, query: parameters)
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
            if let id = lastID.value { request.setValue(id, forHTTPHeaderField: "Last-Event-ID") }
            request.timeoutInterval = reconnect.idleTimeout
            let (response, chunks) = try await client.transport.stream(request)
            if response.statusCode != 200 {
                var body = Data()
                for try await chunk in chunks where body.count < 65_536 { body.append(chunk) }
                let error = ServerError(response: response, body: body)
                if response.statusCode == 401 { client.noteUnauthorized(request, response, body) }
                if response.statusCode < 500 && response.statusCode != 429 {
                    continuation.finish(throwing: RoostError.server(error))
                    return true
                }
                if let after = error.retryAfter { delay.set(Double(after)) }
            } else {
                delay.set(reconnect.initialDelay)
                var parser = SSEParser()
                for try await chunk in chunks {
                    for event in parser.feed(chunk) {
                        if let id = event.id { lastID.set(id) }
                        if let ms = event.retry { delay.set(Double(ms) / 1000) }
                        if let live = LiveEvent(event, collection: collection) { continuation.yield(live) }
                    }
                }
            }
        } catch {}
        return false
    }
}

/// How ``LiveEvents`` reconnects after a drop: the first wait, doubling up to
/// the maximum, and how long a silent connection is kept.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Seconds to wait before the first reconnect (reset after each successful connection).
    public var initialDelay: Double
    /// The longest wait between reconnects.
    public var maximumDelay: Double
    /// Seconds a connection may stay silent before it is dropped and reopened:
    /// three of the server's 15 s heartbeats, so a connection a network change
    /// left dead is noticed in under a minute.
    public var idleTimeout: Double

    public init(initialDelay: Double = 0.25, maximumDelay: Double = 30, idleTimeout: Double = 45) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.idleTimeout = idleTimeout
    }
}

extension RoostClient {
    /// The live changes of `collection`, optionally only of documents matching `filter`
    /// (`GET /:collection/_live`).
    ///
    /// - Parameters:
    ///   - lastEventID: resume after this event (from an earlier ``LiveEvent/id``).
    ///   - reconnect: how to reconnect after a drop.
    public func live(_ collection: String, filter: Filter? = nil, lastEventID: String? = nil,
                     reconnect: ReconnectPolicy = ReconnectPolicy()) -> LiveEvents {
        LiveEvents(client: self, path: [collection, "_live"], parameters: filter.map { [("query", $0.json)] } ?? [],
                   collection: collection, lastEventID: lastEventID, reconnect: reconnect)
    }

    /// The live changes of several collections on one connection (`GET /events`):
    /// each event names its collection. Up to 32 subscriptions.
    public func live(_ subscriptions: [Mirror], lastEventID: String? = nil,
                     reconnect: ReconnectPolicy = ReconnectPolicy()) -> LiveEvents {
        let list = JSONValue.array(subscriptions.map { m in
            var o: [String: JSONValue] = ["collection": .string(m.name)]
            if let f = m.filter { o["query"] = .object(f.document) }
            return .object(o)
        })
        return LiveEvents(client: self, path: ["events"], parameters: [("subscribe", list.jsonText)],
                          collection: "", lastEventID: lastEventID, reconnect: reconnect)
    }

    /// Drops every open live stream's connection of this client and reconnects
    /// it at once (resuming after its last event), cutting any backoff short.
    /// Call it when the app returns to the foreground or the network path
    /// changes (``NetworkPathObserver`` does on Apple platforms): a connection
    /// a network change left dead is otherwise noticed only by the idle timeout.
    public func reconnectLiveStreams() {
        for handler in reconnectHandlers.value.values { handler() }
    }

    func onReconnect(_ handler: @escaping @Sendable () -> Void) -> UUID {
        let key = UUID()
        reconnectHandlers.update { $0[key] = handler }
        return key
    }

    func removeReconnectHandler(_ key: UUID) { reconnectHandlers.update { _ = $0.removeValue(forKey: key) } }
}
