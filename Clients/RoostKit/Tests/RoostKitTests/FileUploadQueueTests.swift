import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import RoostKit

/// A transport with no network at all.
struct OfflineTransport: HTTPTransport {
    let code: URLError.Code
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) { throw URLError(code) }
    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) { throw URLError(code) }
}

@Suite("File upload queue") struct FileUploadQueueTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("roostkit-queue-\(UUID().uuidString)")
    }

    static func signedIn(_ transport: HTTPTransport) throws -> RoostClient {
        let store = MemoryTokenStore()
        try store.save(JSONDecoder().decode(RoostSession.self, from: Data(AccountCallTests.session.utf8)))
        return RoostClient(baseURL: URL(string: "http://roost.test")!, tokenStore: store, transport: transport)
    }

    @Test("offline: items stay queued, on disk, and a new queue on the folder finds them", arguments: [
        (URLError.Code.notConnectedToInternet, false), (.networkConnectionLost, true), (.timedOut, true),
    ])
    func offline(code: URLError.Code, uncertain: Bool) async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let client = try Self.signedIn(OfflineTransport(code: code))
        let queue = try FileUploadQueue(client: client, directory: dir, automatic: false)
        let item = try queue.enqueue(Data("bytes".utf8), contentType: "text/plain", name: "a.txt")
        let report = await queue.sendPending()
        #expect(report == FileUploadQueue.Report(uploaded: [], failed: [], remaining: 1, recovered: 0))
        let kept = try #require(queue.item(item.id))
        #expect(kept.state == .queued && kept.attempts == 1)
        #expect(kept.uncertain == uncertain, "a request that may have left is looked up before it is sent again")

        let relaunched = try FileUploadQueue(client: client, directory: dir, automatic: false)
        #expect(relaunched.items.map(\.id) == [item.id])
        #expect(relaunched.items.first?.name == "a.txt" && relaunched.items.first?.size == 5)
        #expect(try Data(contentsOf: relaunched.bytesURL(item.id)) == Data("bytes".utf8))
    }

    @Test("signed out: nothing is sent; a server refusal fails the item and drops its bytes")
    func signedOutAndRefused() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let anonymous = RoostClient(baseURL: URL(string: "http://roost.test")!, transport: CannedTransport(201, "{}"))
        let idle = try FileUploadQueue(client: anonymous, directory: dir, automatic: false)
        try idle.enqueue(Data("x".utf8), contentType: "text/plain")
        #expect(await idle.sendPending().remaining == 1)

        let refusing = try Self.signedIn(CannedTransport(413, #"{"error":"PayloadTooLarge","description":"too big"}"#))
        let queue = try FileUploadQueue(client: refusing, directory: dir, automatic: false)
        let report = await queue.sendPending()
        #expect(report.failed.count == 1)
        let item = try #require(queue.items.first)
        #expect(item.state == .failed(status: 413, code: "PayloadTooLarge", message: "too big"))
        #expect(!FileManager.default.fileExists(atPath: queue.bytesURL(item.id).path))
        #expect(queue.remove(item.id) && queue.items.isEmpty)
    }

    @Test("progress fractions")
    func fractions() {
        #expect(TransferProgress(completed: 5, total: 10).fraction == 0.5)
        #expect(TransferProgress(completed: 5, total: -1).fraction == nil)
        #expect(TransferProgress(completed: 12, total: 10).fraction == 1)
    }
}
