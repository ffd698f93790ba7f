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
    let collection: String
    let filter: Filter?
    let lastEventID: String?
    let reconnect: ReconnectPolicy

    public func makeAsyncIterator() -> AsyncThrowingStream<LiveEvent, Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream<LiveEvent, Error>.makeStream()
        let task = Task { [self] in await run(continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }

    private func run(_ continuation: AsyncThrowingStream<LiveEvent, Error>.Continuation) async {
        var lastID = lastEventID
        var delay = reconnect.initialDelay
        while !Task.isCancelled {
            do {
                var request = client.request("GET", [collection, "_live"], query: filter.map { [("query", $0.json)] } ?? [])
                request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
                request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
                if let lastID { request.setValue(lastID, forHTTPHeaderField: "Last-Event-ID") }
                request.timeoutInterval = reconnect.idleTimeout
                let (response, chunks) = try await client.transport.stream(request)
                if response.statusCode != 200 {
                    var body = Data()
                    for try await chunk in chunks where body.count < 65_536 { body.append(chunk) }
                    let error = ServerError(response: response, body: body)
                    if response.statusCode == 401 { client.noteUnauthorized(request, response, body) }
                    if response.statusCode < 500 && response.statusCode != 429 {
                        return continuation.finish(throwing: RoostError.server(error))
                    }
                    if let after = error.retryAfter { delay = Double(after) }
                } else {
                    delay = reconnect.initialDelay
                    var parser = SSEParser()
                    for try await chunk in chunks {
                        for event in parser.feed(chunk) {
                            if let id = event.id { lastID = id }
                            if let ms = event.retry { delay = Double(ms) / 1000 }
                            if let live = LiveEvent(event, collection: collection) { continuation.yield(live) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { break }
            }
            try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            delay = Swift.min(delay * 2, reconnect.maximumDelay)
        }
        continuation.finish()
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
    /// The live changes of `collection`, optionally only of documents matching `filter`.
    ///
    /// - Parameters:
    ///   - lastEventID: resume after this event (from an earlier ``LiveEvent/id``).
    ///   - reconnect: how to reconnect after a drop.
    public func live(_ collection: String, filter: Filter? = nil, lastEventID: String? = nil,
                     reconnect: ReconnectPolicy = ReconnectPolicy()) -> LiveEvents {
        LiveEvents(client: self, collection: collection, filter: filter, lastEventID: lastEventID, reconnect: reconnect)
    }
}

extension OfflineStore {
    /// The live changes of a mirrored collection, each applied to the mirror
    /// before it is yielded, so reads see it as soon as the app does.
    public nonisolated func liveUpdates(_ collection: String) -> AsyncThrowingStream<LiveEvent, Error> {
        let events = client.live(collection, filter: mirrors[collection]?.filter)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in events {
                        try await self.apply(event)
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
}
