import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// Thumbnail jobs claimed with `FOR UPDATE SKIP LOCKED` and a lease.
@Suite("PostgreSQL engine: job claims")
struct PostgresFileJobsTests {
    @Test("nodes claiming at once each get different jobs, and every job is claimed exactly once")
    func claimedOnce() throws {
        let store = try PGTestStore()
        _ = try store.writer.commitBatch([{ w in
            for i in 0..<200 { try w.enqueueFileJob(fileID: "f\(i)", contentType: "image/png") }
        }])[0].get()
        let nodes = try (0..<4).map { _ in HandOver(try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "n"))) }
        let claimed = HandOver(NSLock())
        nonisolated(unsafe) var byNode: [[String]] = Array(repeating: [], count: nodes.count)
        let group = DispatchGroup()
        for (n, node) in nodes.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                while let batch = try? node.value.claimFileJobs(worker: "node\(n)", limit: 7, lease: 60), !batch.isEmpty {
                    claimed.value.withLock { byNode[n] += batch.map(\.fileID) }
                }
            }.start()
        }
        group.wait()
        let all = byNode.flatMap { $0 }
        #expect(all.count == 200)
        #expect(Set(all).count == 200, "a job was claimed twice")
        #expect(byNode.filter { !$0.isEmpty }.count >= 2, "the claims did not interleave: \(byNode.map(\.count))")
    }

    @Test("a lease that passed goes to another node; the first can no longer finish the job")
    func leaseExpiry() throws {
        let store = try PGTestStore()
        _ = try store.writer.commitBatch([{ w in try w.enqueueFileJob(fileID: "f", contentType: "image/png") }])[0].get()
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b"))
        #expect(try store.writer.claimFileJobs(worker: "a", limit: 5, lease: 0.3).map(\.fileID) == ["f"])
        #expect(try other.claimFileJobs(worker: "b", limit: 5, lease: 60).isEmpty, "claimed while the lease held")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try other.claimFileJobs(worker: "b", limit: 5, lease: 60).map(\.fileID) == ["f"])
        #expect(try store.writer.finishFileJob(fileID: "f", worker: "a") == false)
        #expect(try other.finishFileJob(fileID: "f", worker: "b") == true)
        #expect(try other.claimFileJobs(worker: "b", limit: 5, lease: 60).isEmpty)
    }
}
