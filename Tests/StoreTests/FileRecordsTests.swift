import JSON
import Store
import Testing

@Suite struct FileRecordsTests {
    func upload(_ store: TestStore, sizes: [String]) throws -> String {
        let id = "6b021b262dbb8361c1b82a1c"
        let metadata = FileMetadata(contentType: "image/png", size: 10, sha256: "00", name: nil, dimensions: (4, 4),
                                    thumbnails: sizes.map { (size: $0, state: .pending(url: "/files/\(id)/thumbnail?size=\($0)")) },
                                    url: "/files/\(id)")
        _ = try store.writer.transaction {
            try store.writer.insertFile(id: id, metadata: metadata, thumbnailJob: true, scope: .system)
        }
        return id
    }

    static let ready = ThumbnailState.ready(contentType: "image/webp", width: 4, height: 4, size: 50, url: "/t", madeAt: "2026-11-24T00:00:00.000Z")

    /// The document keeps the shape clients read (`GET /files/:id/meta`), field for field and in order.
    @Test func theMetadataDocumentHasItsDocumentedShape() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128"])
        let doc = object(try #require(try store.reader.file(id: id, scope: .system)))
        #expect(doc.members.map(\.key).filter { !$0.hasPrefix("_") } == ["contentType", "size", "sha256", "width", "height", "thumbnails", "url"])
        #expect(doc["thumbnails"] == .object(object(#"{"128":{"state":"pending","url":"/files/6b021b262dbb8361c1b82a1c/thumbnail?size=128"}}"#)))
        #expect(Self.ready.json == .object(object(#"{"state":"ready","contentType":"image/webp","width":4,"height":4,"size":50,"url":"/t","madeAt":"2026-11-24T00:00:00.000Z"}"#)))
        #expect(ThumbnailState.failed(error: "bad").json == .object(object(#"{"state":"failed","error":"bad"}"#)))
    }

    /// Each size is recorded on its own; the job ends with the last one.
    @Test func theJobEndsWithTheLastConfiguredSize() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128", "512"])
        let ready = Self.ready
        #expect(try store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "128", state: ready, sizes: ["128", "512"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).map(\.fileID) == [id])
        let doc = try #require(try store.reader.file(id: id, scope: .system))
        #expect(object(doc)["thumbnails"]?.objectValue?["128"]?.objectValue?["state"] == .string("ready"))
        #expect(object(doc)["thumbnails"]?.objectValue?["512"]?.objectValue?["state"] == .string("pending"))
        #expect(try store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "512", state: ready, sizes: ["128", "512"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty)
    }

    /// A size dropped from the configuration while its job waited does not keep the job forever.
    @Test func aSizeNoLongerConfiguredDoesNotKeepTheJob() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128", "256"])
        let ready = Self.ready
        #expect(try store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "128", state: ready, sizes: ["128"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty)
    }

    @Test func aDeletedFileEndsItsJob() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128"])
        try store.writer.transaction { try store.writer.removeFileRows([id]) }
        #expect(try !store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "128", state: .failed(error: "gone"), sizes: ["128"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty)
    }
}
