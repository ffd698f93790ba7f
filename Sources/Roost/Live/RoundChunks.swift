import EventLoop

/// The chunks of one flush of the live hub, shared by every stream whose
/// round holds the same bytes: most streams of a view get the same events,
/// so their round is joined into one chunk once, not once per stream, and
/// every connection refers to it (`ResponseStream.send`). Hub thread only.
struct RoundChunks {
    private struct Key: Hashable {
        let hash: Int
        let pieces: Int
        let bytes: Int
    }

    private var made: [Key: [(pieces: [SharedBytes], chunks: [SharedBytes])]] = [:]

    /// Rounds up to this size are joined into one chunk (one write per
    /// stream); a larger one goes piece by piece, each piece shared by
    /// reference, so a big entity is never copied per stream.
    static let joinedLimit = 64 << 10

    /// The chunks that carry `subscriber`'s round.
    mutating func chunks(for subscriber: LiveHub.Subscriber) -> [SharedBytes] {
        let pieces = subscriber.buffered
        guard pieces.count > 1, subscriber.bufferedBytes <= Self.joinedLimit else { return pieces }
        let key = Key(hash: subscriber.bufferedHash, pieces: pieces.count, bytes: subscriber.bufferedBytes)
        if let known = made[key]?.first(where: { Self.same($0.pieces, pieces) }) { return known.chunks }
        let chunks = [SharedBytes(concatenating: pieces)]
        made[key, default: []].append((pieces, chunks))
        return chunks
    }

    /// The same objects in the same order.
    private static func same(_ a: [SharedBytes], _ b: [SharedBytes]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 === $1 }
    }
}
