import EventLoop
import Foundation
import Store

/// The fan-out thread's way out: heartbeats, bytes queued per subscriber
/// within `live_buffer_bytes`, resyncs, and one hand-over per loop per
/// flush. Only the fan-out thread calls these (they touch its own state:
/// `subscribers`, `dirty`).
extension LiveHub {
    /// Heartbeats, and the end of streams whose session expired or was revoked.
    func beat(_ reader: any AccountsReading) throws {
        lastBeat = Date()
        var valid: [String: Bool] = [:]
        for subscriber in subscribers.values {
            if let hash = subscriber.tokenHash {
                if valid[hash] == nil { valid[hash] = try reader.session(tokenHash: hash, now: Authenticator.now) != nil }
                if valid[hash] == false {
                    subscribers[subscriber.id] = nil
                    subscriber.ending = true
                    let stream = subscriber.stream
                    stream.loop.execute { stream.finish() }
                    continue
                }
            }
            send(subscriber, ServerSentEvent.heartbeat)
        }
    }

    /// A new stream's caller was found on a reader a moment ago: a log-out or
    /// revocation that committed since (and checked the streams before this
    /// one was here) ends it now, not at the next heartbeat.
    /// - Returns: true when the session is gone and the stream ends.
    func sessionEndedBeforeAdmission(_ subscriber: Subscriber, _ reader: any AccountsReading) throws -> Bool {
        guard let hash = subscriber.tokenHash, try reader.session(tokenHash: hash, now: Authenticator.now) == nil else { return false }
        let stream = subscriber.stream
        stream.loop.execute { stream.finish() }
        return true
    }

    /// Queues bytes for a subscriber; a round's bytes for one stream go out as one chunk.
    /// Events go through `fits` first; heartbeats, the preamble and resets are a few bytes.
    func send(_ subscriber: Subscriber, _ bytes: SharedBytes) {
        if subscriber.buffered.isEmpty { dirty.append(subscriber) }
        subscriber.buffered.append(bytes)
        subscriber.bufferedBytes += bytes.count
        subscriber.bufferedHash = (subscriber.bufferedHash &* 31) &+ ObjectIdentifier(bytes).hashValue
    }

    func send(_ subscriber: Subscriber, _ bytes: [UInt8]) { send(subscriber, SharedBytes(bytes)) }

    /// Whether `count` more bytes keep the subscriber within `live_buffer_bytes`
    /// (everything it holds: this round's bytes, bytes on their way to its
    /// loop and unsent in its connection). An event larger than the limit goes
    /// alone, when the stream holds nothing else.
    func fits(_ subscriber: Subscriber, _ count: Int) -> Bool {
        let held = subscriber.held
        return held == 0 || held + count <= bufferLimit
    }

    /// The subscriber cannot take its next event (`count` bytes): it waits
    /// for its client to read (its loop wakes the hub once the event would
    /// fit, or half the limit has gone), and is dropped when the client has
    /// taken nothing for `LiveBudget.stallMilliseconds`.
    /// - Returns: true when there is room already (come back soon); false
    ///   when it waits, or was dropped (`ending`).
    func waitForRoom(_ subscriber: Subscriber, for count: Int) -> Bool {
        if subscriber.stream.stalledMilliseconds > LiveBudget.stallMilliseconds {
            subscribers[subscriber.id] = nil
            subscriber.ending = true
            let stream = subscriber.stream
            stream.loop.execute { stream.abort() }
            metrics.slow.increment()
            return false
        }
        // An event larger than the limit goes alone: it waits for an empty buffer.
        let threshold = count > bufferLimit ? 0 : min(bufferLimit / 2, bufferLimit - count)
        subscriber.stream.signalBelow(threshold)
        // It may have drained before the signal was armed.
        return subscriber.held <= threshold
    }

    /// Ends a stream whose filter ran past its budget on change `seq`: a
    /// `reset` with that change's id, then the end of the stream.
    func resync(_ subscriber: Subscriber, at seq: Int64, rolesChanged: Bool = false) {
        send(subscriber, rolesChanged ? rolesChangedReset(seq) : overBudgetReset(seq))
        subscriber.ending = true
        subscribers[subscriber.id] = nil
        if !rolesChanged { metrics.overBudget.increment() }
    }

    /// Hands each loop its bytes: one `execute` per loop per flush. Streams
    /// whose round holds the same bytes (the same view, as most do) share one
    /// chunk, made once. The bytes are promised to their streams first, so
    /// `held` counts them until the loop has put them in the connection.
    func flush() {
        guard !dirty.isEmpty else { return }
        var chunks = RoundChunks()
        var byLoop: [Int: (EventLoop, [StreamWrite])] = [:]
        for subscriber in dirty {
            let loop = subscriber.stream.loop
            subscriber.stream.promise(subscriber.bufferedBytes)
            let write = StreamWrite(stream: subscriber.stream, chunks: chunks.chunks(for: subscriber), promised: subscriber.bufferedBytes,
                                    end: subscriber.ending)
            byLoop[loop.index, default: (loop, [])].1.append(write)
            subscriber.buffered = []
            subscriber.bufferedBytes = 0
            subscriber.bufferedHash = 0
        }
        dirty.removeAll(keepingCapacity: true)
        lastFlush = Date()
        condition.lock()
        if writing == 0 { writeStarted = Date() }
        writing += byLoop.count
        condition.unlock()
        for (_, (loop, writes)) in byLoop {
            loop.execute { [self] in write(writes, from: 0, on: loop) }
        }
    }

    /// One stream's share of a flush: its chunks, then its end when it was told to resync.
    struct StreamWrite {
        let stream: ResponseStream
        let chunks: [SharedBytes]
        let promised: Int
        let end: Bool
    }

    /// On `loop`: writes `LiveBudget.streamsPerTurn` streams, the rest on the
    /// loop's next turns, so a request that comes meanwhile waits for one
    /// slice, not for every stream; the last slice tells the hub.
    private func write(_ writes: [StreamWrite], from start: Int, on loop: EventLoop) {
        let end = min(writes.count, start + LiveBudget.streamsPerTurn)
        for write in writes[start..<end] {
            var promised = write.promised   // counted once, with the first chunk
            for chunk in write.chunks {
                write.stream.send(chunk, promised: promised)
                promised = 0
            }
            if write.end { write.stream.finish() }
        }
        if end < writes.count {
            loop.nextTurn { [self] in write(writes, from: end, on: loop) }
        } else {
            condition.lock()
            writing -= 1
            if writing == 0 {
                let now = Date()
                restUntil = now.addingTimeInterval(min(LiveBudget.longestRest, now.timeIntervalSince(writeStarted) * LiveBudget.restPerWrite))
                condition.signal()
            }
            condition.unlock()
        }
    }

    func closeAll(_ pending: [Subscriber]) {
        // Each stream ends after its last bytes, in the same write.
        for subscriber in subscribers.values where !subscriber.ending {
            subscriber.ending = true
            if subscriber.buffered.isEmpty { dirty.append(subscriber) }
        }
        flush()
        for subscriber in pending {
            let stream = subscriber.stream
            stream.loop.execute { stream.finish() }
        }
        subscribers.removeAll()
    }
}
