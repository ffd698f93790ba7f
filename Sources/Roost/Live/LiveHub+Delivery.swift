import EventLoop
import Foundation
import Store

/// The fan-out thread's way out: heartbeats, bytes queued per subscriber in
/// a round, and one hand-over per loop per round. Only the fan-out thread
/// calls these (they touch its own state: `subscribers`, `dirty`).
extension LiveHub {
    /// Heartbeats, and the end of streams whose session expired or was revoked.
    func beat(_ reader: any DocumentReading) throws {
        lastBeat = Date()
        var valid: [String: Bool] = [:]
        for subscriber in subscribers.values {
            if let hash = subscriber.tokenHash {
                if valid[hash] == nil { valid[hash] = try reader.session(tokenHash: hash, now: Authenticator.now) != nil }
                if valid[hash] == false {
                    subscribers[subscriber.id] = nil
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
    func sessionEndedBeforeAdmission(_ subscriber: Subscriber, _ reader: any DocumentReading) throws -> Bool {
        guard let hash = subscriber.tokenHash, try reader.session(tokenHash: hash, now: Authenticator.now) == nil else { return false }
        let stream = subscriber.stream
        stream.loop.execute { stream.finish() }
        return true
    }

    /// Queues bytes for a subscriber; a round's bytes for one stream go out as one chunk.
    func send(_ subscriber: Subscriber, _ bytes: [UInt8]) {
        if subscriber.buffered.isEmpty { dirty.append(subscriber) }
        subscriber.buffered += bytes
    }

    /// Hands each loop its bytes: one `execute` per loop per round.
    func flush() {
        guard !dirty.isEmpty else { return }
        var byLoop: [Int: (EventLoop, [(ResponseStream, [UInt8])])] = [:]
        for subscriber in dirty {
            let loop = subscriber.stream.loop
            byLoop[loop.index, default: (loop, [])].1.append((subscriber.stream, subscriber.buffered))
            subscriber.buffered = []
        }
        dirty.removeAll(keepingCapacity: true)
        let limit = bufferLimit, slow = metrics.slow
        for (_, (loop, items)) in byLoop {
            loop.execute {
                // Slow: what earlier rounds handed a stream is still unsent past the
                // limit (judged once per round, before this round's bytes).
                for (stream, bytes) in items where stream.isOpen {
                    if stream.pending > limit {
                        stream.abort()
                        slow.increment()
                        continue
                    }
                    stream.write(bytes)
                }
            }
        }
    }

    func closeAll(_ pending: [Subscriber]) {
        flush()
        for subscriber in Array(subscribers.values) + pending {
            let stream = subscriber.stream
            stream.loop.execute { stream.finish() }
        }
        subscribers.removeAll()
    }
}
