@testable import Daemon
import Logging
import Testing

@Suite struct LogRingTests {
    func fill(_ ring: LogRing, _ n: Int) {
        for i in 1...n {
            ring.append(level: i % 2 == 0 ? .error : .info, label: "t", message: "m\(i)", fields: [("request_id", "r\(i % 3)")])
        }
    }

    @Test func keepsTheNewestEntriesInOrderAndResumesAfterASequence() {
        let ring = LogRing(capacity: 4)
        fill(ring, 10)
        let (all, last) = ring.entries(after: 0)
        #expect(all.map(\.message) == ["m7", "m8", "m9", "m10"])
        #expect(last == 10)
        #expect(ring.entries(after: 8).records.map(\.seq) == [9, 10])
        #expect(ring.entries(after: 10).records.isEmpty)
    }

    @Test func filtersByLevelAndRequestID() {
        let ring = LogRing(capacity: 16)
        fill(ring, 6)
        #expect(ring.entries(after: 0, minimum: .error).records.map(\.message) == ["m2", "m4", "m6"])
        #expect(ring.entries(after: 0, requestID: "r1").records.map(\.message) == ["m1", "m4"])
        #expect(ring.entries(after: 0, requestID: "r1").records[0].fields.isEmpty) // request_id is its own column
    }

    @Test func accessEntriesAreFormattedWhenRead() {
        let ring = LogRing(capacity: 4)
        let sink = RecordingLogSink(NullSink(), ring: ring)
        sink.writeAccess(AccessEntry(method: "GET", path: "/x", route: "/:collection", status: 200, durationNanoseconds: 1_234_567,
                                     requestID: "abc", remoteAddress: "127.0.0.1"))
        let record = ring.entries(after: 0).records[0]
        #expect(record.message == "GET /x 200 1.235ms")
        #expect(record.requestID == "abc" && record.level == .info && record.label == "access")
    }

    @Test func hiddenAccessEntriesAreLeftOutButTheSequenceMovesOn() {
        let ring = LogRing(capacity: 8)
        let sink = RecordingLogSink(NullSink(), ring: ring)
        for (path, status) in [("/admin/stats", 200), ("/notes", 200), ("/admin/stats", 401)] {
            sink.writeAccess(AccessEntry(method: "GET", path: path, route: path, status: status, durationNanoseconds: 1000,
                                         requestID: "r", remoteAddress: "127.0.0.1"))
        }
        ring.append(level: .info, label: "t", message: "/admin/stats in a message", fields: [])
        let (records, last) = ring.entries(after: 0, hiding: { $0.route == "/admin/stats" && $0.status == 200 })
        #expect(records.map(\.message) == ["GET /notes 200 0.001ms", "GET /admin/stats 401 0.001ms", "/admin/stats in a message"])
        #expect(last == 4)
        #expect(ring.entries(after: 0).records.count == 4)
    }

    struct NullSink: LogSink {
        func write(level: Logger.Level, label: String, message: String, fields: [(String, String)], file: String, function: String, line: UInt) {}
        func writeAccess(_ entry: AccessEntry) {}
    }
}

@Suite struct LiveCountersTests {
    @Test func percentilesComeFromLogBuckets() {
        var h = LatencyHistogram()
        for _ in 0..<98 { h.record(1_000_000) } // 1 ms
        for _ in 0..<2 { h.record(100_000_000) } // 100 ms
        let p50 = h.quantile(0.5)!, p99 = h.quantile(0.99)!
        #expect(p50 >= 1 && p50 < 1.2)
        #expect(p99 >= 100 && p99 < 120)
        #expect(LatencyHistogram().quantile(0.5) == nil)
        #expect(h.minus(h).quantile(0.5) == nil)
    }

    @Test func countersSumByLabelAndRequestsSplitByStatus() {
        let live = LiveCounters()
        live.makeCounter(label: "roost_write_commits_total", dimensions: []).increment(by: 2)
        live.makeCounter(label: "roost_write_commits_total", dimensions: [("x", "y")]).increment(by: 3)
        live.makeCounter(label: "roost_http_requests_total", dimensions: [("status", "503")]).increment(by: 1)
        live.makeCounter(label: "roost_http_requests_total", dimensions: [("status", "404")]).increment(by: 1)
        live.makeCounter(label: "roost_http_requests_total", dimensions: [("status", "200")]).increment(by: 1)
        live.makeTimer(label: "roost_http_request_duration_seconds", dimensions: []).recordNanoseconds(2_000_000)
        let s = live.snapshot()
        #expect(s.counters["roost_write_commits_total"] == 5)
        #expect(s.requests == 3 && s.serverErrors == 1 && s.clientErrors == 1)
        #expect(s.latency.quantile(0.5)! >= 2)
    }
}
