import JSON
import Store
import Testing

@Suite struct FileRecordsTests {
    func upload(_ store: TestStore, sizes: [String]) throws -> String {
        var thumbnails = JSONObject()
        for size in sizes { thumbnails[size] = .object(object(#"{"state":"pending"}"#)) }
        var metadata = object(#"{"contentType":"image/png","size":10,"sha256":"00","width":4,"height":4}"#)
        metadata["thumbnails"] = .object(thumbnails)
        let id = "6b021b262dbb8361c1b82a1c"
        _ = try store.writer.transaction {
            try store.writer.insertFile(id: id, metadata: metadata, contentType: "image/png", thumbnailJob: true, scope: .system)
        }
        return id
    }

    /// Each size is recorded on its own; the job ends with the last one.
    @Test func theJobEndsWithTheLastConfiguredSize() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128", "512"])
        let ready = JSONValue.object(object(#"{"state":"ready","width":4,"height":4}"#))
        #expect(try store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "128", value: ready, sizes: ["128", "512"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).map(\.fileID) == [id])
        let doc = try #require(try store.reader.file(id: id, scope: .system))
        #expect(object(doc)["thumbnails"]?.objectValue?["128"]?.objectValue?["state"] == .string("ready"))
        #expect(object(doc)["thumbnails"]?.objectValue?["512"]?.objectValue?["state"] == .string("pending"))
        #expect(try store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "512", value: ready, sizes: ["128", "512"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty)
    }

    /// A size dropped from the configuration while its job waited does not keep the job forever.
    @Test func aSizeNoLongerConfiguredDoesNotKeepTheJob() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128", "256"])
        let ready = JSONValue.object(object(#"{"state":"ready"}"#))
        #expect(try store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "128", value: ready, sizes: ["128"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty)
    }

    @Test func aDeletedFileEndsItsJob() throws {
        let store = try TestStore()
        let id = try upload(store, sizes: ["128"])
        try store.writer.transaction { try store.writer.removeFileRows([id]) }
        #expect(try !store.writer.transaction { try store.writer.recordThumbnail(id: id, name: "128", value: .null, sizes: ["128"]) })
        #expect(try store.reader.pendingFileJobs(limit: 10).isEmpty)
    }
}
