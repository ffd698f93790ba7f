import Testing
@testable import Push

/// `PushPacer`: the rate a flood is held to, and what a trickle gets.
struct PushPacerTests {
    /// Drives a pacer through a flood the way the dispatcher does (send what is
    /// allowed, then wait as told) and returns the pushes sent in `seconds`.
    static func flood(rate: Double, batch: Int, seconds: Int64, lateBy: Int64 = 0) -> (sent: Int, largest: Int) {
        var pacer = PushPacer(rate: rate, batch: batch)
        var now: Int64 = 1_000, sent = 0, largest = 0, flooding = false
        while now < 1_000 + seconds * 1000 {
            let allowed = pacer.allowed(now: now, flooding: flooding)
            if allowed.count > 0 {
                pacer.spend(allowed.count)
                sent += allowed.count
                largest = max(largest, allowed.count)
                flooding = true
                now += 2  // the send itself
            } else {
                now += allowed.waitMilliseconds + lateBy
            }
        }
        return (sent, largest)
    }

    @Test(arguments: [
        // rate, batch, a wake-up late by (ms), the chunk
        (6_000.0, 500, Int64(0), 500),
        (6_000.0, 500, Int64(7), 500),  // late wake-ups: the bucket keeps their time, the rate holds
        (1_000.0, 500, Int64(0), 100),
        (2_000.0, 500, Int64(9), 200),
        (20_000.0, 500, Int64(3), 500),  // a chunk is never more than a batch
        (10.0, 500, Int64(0), 1),
    ])
    func aFloodIsHeldToTheRate(rate: Double, batch: Int, late: Int64, chunk: Int) {
        let r = Self.flood(rate: rate, batch: batch, seconds: 10, lateBy: late)
        let perSecond = Double(r.sent) / 10
        #expect(perSecond >= rate * 0.97 && perSecond <= rate * 1.03 + Double(2 * chunk) / 10, "\(perSecond)/s at \(rate)/s")
        #expect(r.largest <= chunk)
        #expect(PushPacer(rate: rate, batch: batch).chunk == chunk)
    }

    @Test func aTrickleGoesAtOnce() {
        var pacer = PushPacer(rate: 6_000, batch: 500)
        for second in 0..<5 {
            let allowed = pacer.allowed(now: Int64(second) * 1000, flooding: false)
            #expect(allowed.count > 0 && allowed.waitMilliseconds == 0)
            pacer.spend(3)
        }
    }

    @Test func aFloodWaitsForAWholeChunk() {
        var pacer = PushPacer(rate: 6_000, batch: 500)
        pacer.spend(pacer.allowed(now: 0, flooding: false).count)
        let next = pacer.allowed(now: 10, flooding: true)  // 60 refilled of 500
        #expect(next.count == 0 && next.waitMilliseconds == 74)
        #expect(pacer.allowed(now: 10, flooding: false).count == 60)  // a few new pushes need not wait
    }

    @Test(arguments: [nil, 0.0, -5.0] as [Double?])
    func noRateMeansNoPacing(rate: Double?) {
        var pacer = PushPacer(rate: rate, batch: 500)
        for now in [Int64(0), 0, 1] {
            let allowed = pacer.allowed(now: now, flooding: true)
            #expect(allowed.count == 500 && allowed.waitMilliseconds == 0)
            pacer.spend(500)
        }
    }
}
