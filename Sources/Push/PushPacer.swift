/// Holds a node's push delivery to `push.max_rate` notifications a second
/// (a token bucket), so that a broadcast to many devices shares the CPU with
/// the requests instead of taking it in one burst (docs/PUSH.md, Pacing).
///
/// A few due pushes go at once while the bucket holds them; a flood goes in
/// chunks of `chunkSeconds` worth, each sent when the bucket has refilled
/// for it, which keeps every burst of work short.
struct PushPacer {
    /// The refill's length that makes one chunk: 100 ms of the rate (fewer, larger
    /// chunks measured better than 25 or 50 ms: each costs a read of the outbox and a writer job).
    static let chunkSeconds = 0.1

    /// Notifications a second (nil: no pacing).
    let rate: Double?
    /// The most one pass may send (the dispatcher's batch).
    let batch: Int
    /// The largest chunk: `chunkSeconds` of the rate, at least one push and at most a batch.
    let chunk: Int
    private var allowance: Double
    private var lastMilliseconds: Int64?

    init(rate: Double?, batch: Int) {
        let rate = rate.flatMap { $0 > 0 ? $0 : nil }
        self.rate = rate
        self.batch = batch
        chunk = rate.map { min(batch, max(1, Int($0 * Self.chunkSeconds))) } ?? batch
        allowance = Double(chunk)
    }

    /// How many pushes this pass may send at `now` (ms), or the milliseconds
    /// to wait before the next chunk when a flood (`flooding`: the last pass
    /// sent all it was allowed) has used the bucket up.
    mutating func allowed(now: Int64, flooding: Bool) -> (count: Int, waitMilliseconds: Int64) {
        guard let rate else { return (batch, 0) }
        if let last = lastMilliseconds, now > last {
            // Up to two chunks: a pass that woke late sends its next chunk at once, so the rate holds.
            allowance = min(Double(2 * chunk), allowance + Double(now - last) * rate / 1000)
        }
        lastMilliseconds = max(lastMilliseconds ?? now, now)
        let need = flooding ? Double(chunk) : 1
        if allowance >= need { return (min(chunk, Int(allowance)), 0) }
        return (0, max(1, Int64(((need - allowance) * 1000 / rate).rounded(.up))))
    }

    /// Takes `sent` pushes from the bucket.
    mutating func spend(_ sent: Int) {
        guard rate != nil else { return }
        allowance = max(0, allowance - Double(sent))
    }
}
