import Foundation
import JSON
import Logging
import Store
@testable import StorePostgres
import Testing

/// File rows and thumbnail jobs on PostgreSQL: the same answers as SQLite
/// for one node; across nodes each job is claimed by one node, and a file's
/// row and job commit together.
@Suite("PostgreSQL engine: files")
struct PostgresFilesTests {
    static let sizes = ["64", "128"]
    static let ready = ThumbnailState.ready(contentType: "image/webp", width: 4, height: 4, size: 50, url: "/t", madeAt: "2026-11-24T00:00:00.000Z")

    static func metadata(_ id: String, image: Bool, name: String? = nil) -> FileMetadata {
        FileMetadata(contentType: image ? "image/png" : "text/plain", size: 10, sha256: "ab\(id)", name: name,
                     dimensions: image ? (4, 3) : nil,
                     thumbnails: image ? sizes.map { (size: $0, state: .pending(url: "/files/\(id)/thumbnail?size=\($0)")) } : [],
                     url: "/files/\(id)")
    }

    static let alice = AccessScope(principal: .user("alice"), level: .private)
    static let bob = AccessScope(principal: .user("bob"), level: .private)

    static func script(_ w: any DocumentWriting, _ r: any DocumentReading) -> [String] {
        var log: [String] = []
        func step<T>(_ name: String, _ result: Result<T, any Error>) { log.append("\(name): \(outcome(result))") }
        func info(_ id: String, _ scope: AccessScope) -> String {
            outcome({ try r.fileForServing(id: id, scope: scope) }) { $0.map { "\($0.contentType) \($0.size) \($0.sha256) \($0.name ?? "-") \($0.isImage)" } ?? "nil" }
        }
        step("f1", w.one { try $0.insertFile(id: "f1", metadata: metadata("f1", image: true), thumbnailJob: true, scope: .system) })
        step("f1 again", w.one { try $0.insertFile(id: "f1", metadata: metadata("f1", image: false), thumbnailJob: false, scope: .system) })
        step("f2 by alice", w.one { try $0.insertFile(id: "f2", metadata: metadata("f2", image: false, name: "ünï \"q\".txt"), thumbnailJob: false, scope: alice) })
        step("f3 anonymous", w.one { try $0.insertFile(id: "f3", metadata: metadata("f3", image: false), thumbnailJob: false,
                                                       scope: AccessScope(principal: .anonymous, level: .private)) })
        for (name, scope) in [("system", AccessScope.system), ("alice", alice), ("bob", bob)] {
            step("meta f2 \(name)", Result { try r.file(id: "f2", scope: scope) })
            log.append("serve f2 \(name): " + info("f2", scope))
        }
        log.append("serve f1: " + info("f1", .system))
        log.append("serve none: " + info("none", .system))
        step("bob deletes f2", w.one { try $0.deleteFile(id: "f2", scope: bob) })
        step("jobs", Result { try w.pendingFileJobs(limit: 10).map(\.fileID) })
        step("reader jobs", Result { try r.pendingFileJobs(limit: 10).map { "\($0.fileID) \($0.contentType)" } })
        step("64", w.one { try $0.recordThumbnail(id: "f1", name: "64", state: ready, sizes: sizes) })
        step("jobs after 64", Result { try r.pendingFileJobs(limit: 10).map(\.fileID) })
        step("128 failed", w.one { try $0.recordThumbnail(id: "f1", name: "128", state: .failed(error: "bad"), sizes: sizes) })
        step("jobs after 128", Result { try r.pendingFileJobs(limit: 10).map(\.fileID) })
        step("meta f1", Result { try r.file(id: "f1", scope: .system) })
        step("gone", w.one { try $0.recordThumbnail(id: "none", name: "64", state: ready, sizes: sizes) })
        step("ids", Result { try w.allFileIDs().sorted() })
        step("page", Result { try r.filePage(limit: 1, skip: 1) })
        step("alice deletes f2", w.one { try $0.deleteFile(id: "f2", scope: alice) })
        step("sweep f1", Result { try w.transaction { try w.removeFileRows(["f1", "nothing"]) } })
        step("ids after", Result { try w.allFileIDs().sorted() })
        step("page after", Result { try r.filePage(limit: 10, skip: 0) })
        return log
    }

    @Test("the same file operations give the same answers and errors on both engines")
    func differential() throws {
        try expectSameOnBothEngines(Self.script)
    }

    @Test("three nodes polling the jobs: the uploader's claim holds; after its lease each job goes to exactly one node")
    func claimedOnceAcrossNodes() throws {
        let store = try PGTestStore()
        store.writer.jobWorker = "uploader"
        let ids = (0..<90).map { String(format: "img%02d", $0) }
        for result in store.writer.commitBatch(ids.map { id in { w in try w.insertFile(id: id, metadata: Self.metadata(id, image: true), thumbnailJob: true, scope: .system) } }) {
            _ = try result.get()
        }
        let nodes = try (0..<3).map { n in
            let reader = try PostgresDocumentReader(url: store.url)
            reader.jobWorker = "node\(n)"
            return HandOver(reader)
        }
        for node in nodes { #expect(try node.value.pendingFileJobs(limit: 500).isEmpty, "a job the uploader holds was handed out") }
        #expect(try store.writer.pendingFileJobs(limit: 500).count == 90, "the uploader's own claims come back to it (renewed)")
        // The uploader dies: its leases pass.
        try store.writer.db.run("UPDATE _file_jobs SET lease_until = clock_timestamp() - interval '1 second'")
        let claims = Shared([[String]](repeating: [], count: nodes.count))
        let lock = NSLock(), group = DispatchGroup()
        for (n, node) in nodes.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                // 3 × 40 may claim more than there are: together the nodes take all 90; a second call gives a node its own back.
                for _ in 0..<2 {
                    let got = (try? node.value.pendingFileJobs(limit: 40).map(\.fileID)) ?? ["error"]
                    lock.withLock { claims.value[n] += got }
                }
            }.start()
        }
        group.wait()
        let sets = claims.value.map(Set.init)
        #expect(sets.reduce(Set<String>()) { $0.union($1) } == Set(ids), "every job was claimed")
        for i in sets.indices { for j in sets.indices where j > i { #expect(sets[i].isDisjoint(with: sets[j]), "nodes \(i) and \(j) hold the same job") } }
        // Each node finishes its own jobs; then no node sees any job.
        for (n, set) in sets.enumerated() {
            let writer = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "n\(n)"))
            writer.jobWorker = "node\(n)"
            for id in set { for size in Self.sizes { _ = try writer.one { try $0.recordThumbnail(id: id, name: size, state: Self.ready, sizes: Self.sizes) }.get() } }
        }
        for node in nodes { #expect(try node.value.pendingFileJobs(limit: 500).isEmpty) }
    }

    @Test("a file's row, change and job commit together, or none of them")
    func rowAndJobTogether() throws {
        let store = try PGTestStore()
        let observer = try PostgresDocumentReader(url: store.url)
        observer.jobWorker = "observer"
        func jobs() throws -> Int64 { try store.writer.db.first("SELECT count(*) FROM _file_jobs") { $0.int(0) ?? -1 } ?? -1 }
        // The operation fails after the insert: its savepoint takes the row and the job back.
        let failed = store.writer.one { w -> String in
            _ = try w.insertFile(id: "a", metadata: Self.metadata("a", image: true), thumbnailJob: true, scope: .system)
            throw StoreError.invalid("later step failed")
        }
        #expect((try? failed.get()) == nil)
        #expect(try observer.file(id: "a", scope: .system) == nil)
        #expect(try jobs() == 0)
        // Held before COMMIT: another connection sees neither; after it, both.
        let reached = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        store.writer.beforeCommit = { reached.signal(); release.wait() }
        let writer = HandOver(store.writer)
        Thread {
            _ = writer.value.one { try $0.insertFile(id: "b", metadata: Self.metadata("b", image: true), thumbnailJob: true, scope: .system) }
            done.signal()
        }.start()
        reached.wait()
        let during = (try observer.file(id: "b", scope: .system), try observer.db.first("SELECT count(*) FROM _file_jobs") { $0.int(0) ?? -1 })
        release.signal()
        done.wait()
        store.writer.beforeCommit = nil
        #expect(during.0 == nil && during.1 == 0, "uncommitted row or job visible: \(during)")
        #expect(try observer.file(id: "b", scope: .system) != nil)
        #expect(try jobs() == 1)
        #expect(try store.reader.changes(after: 0, limit: 10).changes.map(\.id) == ["b"], "the failed upload left no change row")
        // Outside a batch (the start-up sweep), `transaction` writes its change rows too.
        try store.writer.transaction { try store.writer.removeFileRows(["b"]) }
        #expect(try store.reader.changes(after: 0, limit: 10).changes.map { "\($0.collection)/\($0.id)" } == ["files/b", "files/b"])
        #expect(try jobs() == 0 && observer.file(id: "b", scope: .system) == nil)
    }

    @Test("two nodes recording different sizes of one file at once keep both")
    func concurrentSizes() throws {
        let store = try PGTestStore()
        _ = try store.writer.one { try $0.insertFile(id: "f", metadata: Self.metadata("f", image: true), thumbnailJob: true, scope: .system) }.get()
        let other = try PostgresDocumentWriter(url: store.url, ids: DocumentID(), logger: Logger(label: "b"))
        let race = try PostgresReferencesTests.holdOpen(store.writer, { try $0.recordThumbnail(id: "f", name: "64", state: Self.ready, sizes: Self.sizes) },
                                                        while: other, { try $0.recordThumbnail(id: "f", name: "128", state: Self.ready, sizes: Self.sizes) })
        #expect(try race.held.get() as? Bool == true)
        #expect(try race.other.get() as? Bool == true)
        let thumbnails = object(try #require(try store.reader.file(id: "f", scope: .system)))["thumbnails"]?.objectValue
        #expect(thumbnails?["64"]?.objectValue?["state"] == .string("ready"))
        #expect(thumbnails?["128"]?.objectValue?["state"] == .string("ready"))
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty, "the last size ended the job")
    }
}
