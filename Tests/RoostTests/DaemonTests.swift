import RoostTestSupport
import Foundation
import Testing

/// Process-level guarantees: durability across kill -9, one daemon per data
/// directory, and 503 instead of an unbounded queue.
@Suite struct DaemonTests {
    @Test func acknowledgedWritesSurviveKill9() throws {
        let roost = try RoostProcess()
        var ids: [String] = []
        for i in 0..<50 {
            let r = try HTTP.json("POST", roost.baseURL + "/orders", ["n": i])
            #expect(r.status == 201)
            if let id = r.object["_id"] as? String { ids.append(id) }
        }
        roost.crash()
        try roost.start()
        let count = try HTTP.send("GET", roost.baseURL + "/orders/_count")
        #expect(count.object["count"] as? Int == 50)
        for id in ids.prefix(5) {
            let r = try HTTP.send("GET", roost.baseURL + "/orders/\(id)")
            #expect(r.status == 200)
        }
    }

    @Test func secondDaemonOnTheSameDataIsRefused() throws {
        let roost = try RoostProcess()
        #expect(throws: (any Error).self) { _ = try RoostProcess(dataDir: roost.dataDir) }
        #expect(roost.process.isRunning)
    }

    @Test func fullQueueAnswers503WithRetryAfter() throws {
        let roost = try RoostProcess(config: "queue_capacity: 1\nreaders: 1\n")
        let docs = (0..<400).map { Data("{\"name\":\"item \($0)\",\"tags\":[\"a\",\"b\",\"c\"],\"n\":\($0)}".utf8) }
        DispatchQueue.concurrentPerform(iterations: docs.count) { i in
            // The tiny queue may refuse a write too; a client retries after Retry-After.
            while let r = try? HTTP.send("POST", roost.baseURL + "/items", headers: ["Content-Type": "application/json"], body: docs[i]),
                  r.status == 503 {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        let slow = HTTP.iosEscape("{\"name\":{\"$regex\":\"^(i|x)+t.*9$\",\"$options\":\"i\"}}")
        let results = LockedList()
        let done = DispatchGroup()
        for _ in 0..<64 {
            done.enter()
            Thread.detachNewThread {
                if let r = try? HTTP.send("GET", roost.baseURL + "/items?limit=1000&count=true&query=\(slow)") {
                    results.append((r.status, r.header("Retry-After")))
                }
                done.leave()
            }
        }
        done.wait()
        let statuses = results.items
        #expect(statuses.count == 64)
        #expect(statuses.contains { $0.0 == 503 && $0.1 != nil }, "expected some 503s, got \(statuses.map(\.0))")
        #expect(statuses.allSatisfy { $0.0 == 200 || $0.0 == 503 })
        // The one reader may still be finishing work the loop already answered
        // for; like any client, the count retries while the queue says 503.
        var after = try HTTP.send("GET", roost.baseURL + "/items/_count")
        for _ in 0..<200 where after.status == 503 {
            Thread.sleep(forTimeInterval: 0.05)
            after = try HTTP.send("GET", roost.baseURL + "/items/_count")
        }
        #expect(after.status == 200)
        #expect(after.object["count"] as? Int == 400)
    }
}

/// Results gathered from concurrent requests.
final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [(Int, String?)] = []
    func append(_ item: (Int, String?)) { lock.lock(); storage.append(item); lock.unlock() }
    var items: [(Int, String?)] { lock.lock(); defer { lock.unlock() }; return storage }
}
