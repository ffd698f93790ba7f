import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import RoostKit

/// One file served with `Range`/`If-Range` as roostd serves it; the first
/// `cutAfter` bytes of the first download arrive, then the connection drops.
final class RangeServer: HTTPTransport, @unchecked Sendable {
    let bytes: Data
    let etag = "\"0123abcd\""
    private let lock = NSLock()
    private var cut: Int?
    private var seen: [URLRequest] = []
    var online = true
    var requests: [URLRequest] { lock.critical { seen } }

    init(_ bytes: Data, cutAfter: Int? = nil) {
        self.bytes = bytes
        cut = cutAfter
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        lock.critical { seen.append(request) }
        guard lock.critical({ online }) else { throw URLError(.notConnectedToInternet) }
        guard request.url?.path.hasPrefix("/files/aaaaaaaaaaaaaaaaaaaaaaaa") == true else {
            return (Data(#"{"error":"NotFound","description":"No file."}"#.utf8), Self.answer(request, 404, [:]))
        }
        var headers = ["ETag": etag, "Content-Type": "image/png"]
        if request.httpMethod == "HEAD" { return (Data(), Self.answer(request, 200, headers)) }
        if let range = request.value(forHTTPHeaderField: "Range"), request.value(forHTTPHeaderField: "If-Range") == etag,
           let start = Int(range.dropFirst("bytes=".count).dropLast()) {
            guard start < bytes.count else { return (Data(), Self.answer(request, 416, headers)) }
            headers["Content-Range"] = "bytes \(start)-\(bytes.count - 1)/\(bytes.count)"
            return (bytes.subdata(in: start..<bytes.count), Self.answer(request, 206, headers))
        }
        return (bytes, Self.answer(request, 200, headers))
    }

    func download(_ request: URLRequest, to destination: URL,
                  progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> (Data, HTTPURLResponse) {
        if let n = lock.critical({ () -> Int? in defer { cut = nil }; return cut }) {
            lock.critical { seen.append(request) }
            try bytes.prefix(n).write(to: destination)
            throw URLError(.networkConnectionLost)
        }
        let (data, response) = try await send(request)
        guard (200..<300).contains(response.statusCode) else { return (data, response) }
        if response.statusCode == 206 {
            let file = try FileHandle(forWritingTo: destination)
            _ = try file.seekToEnd()
            try file.write(contentsOf: data)
            try file.close()
        } else {
            try data.write(to: destination)
        }
        progress(TransferProgress(completed: Int64(data.count), total: Int64(data.count)))
        return (Data(), response)
    }

    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        throw URLError(.unsupportedURL)
    }

    static func answer(_ request: URLRequest, _ status: Int, _ headers: [String: String]) -> HTTPURLResponse {
        HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }
}

@Suite("File download queue and signed URLs") struct FileDownloadQueueTests {
    static let fileID = "aaaaaaaaaaaaaaaaaaaaaaaa"
    static let bytes = Data((0..<5000).map { UInt8($0 % 251) })

    static func folders() -> (URL, URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("roostkit-downloads-\(UUID().uuidString)")
        return (root.appendingPathComponent("queue"), root.appendingPathComponent("cache"))
    }

    static func client(_ transport: HTTPTransport) -> RoostClient {
        RoostClient(baseURL: URL(string: "http://roost.test")!, transport: transport)
    }

    @Test("offline: the item waits on disk; online, it lands in the cache localURL reads")
    func offlineThenOnline() async throws {
        let (dir, cache) = Self.folders()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let server = RangeServer(Self.bytes)
        server.online = false
        let queue = try FileDownloadQueue(client: Self.client(server), directory: dir, cache: cache, automatic: false)
        let item = try queue.enqueue(Self.fileID)
        #expect(await queue.sendPending() == FileDownloadQueue.Report(downloaded: [], failed: [], remaining: 1))
        #expect(queue.item(item.id)?.state == .queued && queue.item(item.id)?.attempts == 1)

        server.online = true
        let relaunched = try FileDownloadQueue(client: Self.client(server), directory: dir, cache: cache, automatic: false)
        #expect(relaunched.items.map(\.id) == [item.id])
        let url = try await relaunched.downloaded(item.id)
        #expect(url == cache.appendingPathComponent(Self.fileID))
        #expect(try Data(contentsOf: url) == Self.bytes)
        // localURL finds it without asking the server.
        let before = server.requests.count
        #expect(try await Self.client(server).files.localURL(of: Self.fileID, in: cache) == url)
        #expect(server.requests.count == before)
        // Queued again: downloaded at once, no request.
        #expect(try relaunched.enqueue(Self.fileID).state == .downloaded(url))
        #expect(server.requests.count == before)
    }

    @Test("a download cut short resumes from its partial file with Range and If-Range")
    func resumes() async throws {
        let (dir, cache) = Self.folders()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let server = RangeServer(Self.bytes, cutAfter: 1800)
        let queue = try FileDownloadQueue(client: Self.client(server), directory: dir, cache: cache, automatic: false)
        let item = try queue.enqueue(Self.fileID, thumbnailSize: 64)
        #expect(item.id == "\(Self.fileID)-64")
        #expect(await queue.sendPending().remaining == 1)
        #expect(queue.partialSize(item.id) == 1800)
        let report = await queue.sendPending()
        #expect(report.downloaded == [item.id])
        let last = try #require(server.requests.last)
        #expect(last.url?.path == "/files/\(Self.fileID)/thumbnail" && last.url?.query == "size=64")
        #expect(last.value(forHTTPHeaderField: "Range") == "bytes=1800-")
        #expect(last.value(forHTTPHeaderField: "If-Range") == server.etag)
        #expect(server.requests.contains { $0.httpMethod == "HEAD" }, "the partial's ETag is asked for before resuming")
        #expect(try Data(contentsOf: cache.appendingPathComponent(item.id)) == Self.bytes)
        #expect(queue.partialSize(item.id) == 0)
    }

    @Test("a file the server does not give fails once and is not retried")
    func refused() async throws {
        let (dir, cache) = Self.folders()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let server = RangeServer(Self.bytes)
        let queue = try FileDownloadQueue(client: Self.client(server), directory: dir, cache: cache, automatic: false)
        let item = try queue.enqueue("bbbbbbbbbbbbbbbbbbbbbbbb")
        #expect(await queue.sendPending().failed == [item.id])
        guard case .failed(404, "NotFound", _)? = queue.item(item.id)?.state else { Issue.record("not failed"); return }
        let count = server.requests.count
        #expect(await queue.sendPending() == FileDownloadQueue.Report())
        #expect(server.requests.count == count)
        let thrown = await #expect(throws: RoostError.self) { try await queue.downloaded(item.id) }
        #expect(thrown?.code == .notFound)
    }

    @Test("the default transport appends a 206 to what the destination holds and replaces it on a 200")
    func defaultTransportAppends() async throws {
        struct Plain: HTTPTransport {
            let server: RangeServer
            func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) { try await server.send(request) }
            func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) { throw URLError(.unsupportedURL) }
        }
        let (dir, _) = Self.folders()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let plain = Plain(server: RangeServer(Self.bytes))
        let target = dir.appendingPathComponent("f")
        try Self.bytes.prefix(100).write(to: target)
        var request = URLRequest(url: URL(string: "http://roost.test/files/\(Self.fileID)")!)
        request.setValue("bytes=100-", forHTTPHeaderField: "Range")
        request.setValue(plain.server.etag, forHTTPHeaderField: "If-Range")
        _ = try await plain.download(request, to: target) { _ in }
        #expect(try Data(contentsOf: target) == Self.bytes)
        try Data("stale".utf8).write(to: target)
        _ = try await plain.download(URLRequest(url: request.url!), to: target) { _ in }
        #expect(try Data(contentsOf: target) == Self.bytes)
    }

    @Test("signed URL requests and answers", arguments: [
        (nil, nil, "{}"), (64, nil, #"{"thumbnail":{"size":64}}"#), (nil, 60, #"{"ttl":60}"#),
    ] as [(Int?, Int?, String)])
    func signRequest(size: Int?, ttl: Int?, json: String) throws {
        let body = try RoostClient.body(RoostFiles.signRequest(thumbnailSize: size, ttl: ttl))
        #expect(try JSONSerialization.jsonObject(with: body) as? NSDictionary == JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary)
    }

    @Test("a signed path is made absolute under the client's base URL, and only a server path")
    func absolute() {
        let path = "/files/\(Self.fileID)?expires=1&sig=abc"
        #expect(RoostFiles.absolute(path, base: URL(string: "https://h.example/")!)?.absoluteString == "https://h.example" + path)
        #expect(RoostFiles.absolute(path, base: URL(string: "https://h.example/api")!)?.absoluteString == "https://h.example/api" + path)
        #expect(RoostFiles.absolute("//evil.example/x", base: URL(string: "https://h.example")!) == nil)
        #expect(RoostFiles.absolute("https://evil.example/x", base: URL(string: "https://h.example")!) == nil)
    }

    @Test("signed(_:) posts to /files/:id/url and returns the absolute URL and expiry")
    func signed() async throws {
        let canned = CannedTransport(200, #"{"url":"/files/\#(Self.fileID)/thumbnail?size=64&expires=1900000000&sig=xyz","expires":1900000000,"expiresAt":"2030-03-17T17:46:40.000Z"}"#)
        let link = try await Self.client(canned).files.signed(Self.fileID, thumbnailSize: 64, ttl: 120)
        #expect(link.url.absoluteString == "http://roost.test/files/\(Self.fileID)/thumbnail?size=64&expires=1900000000&sig=xyz")
        #expect(link.expiresAt == Date(timeIntervalSince1970: 1_900_000_000))
        let sent = try #require(canned.requests.first)
        #expect(sent.httpMethod == "POST" && sent.url?.path == "/files/\(Self.fileID)/url")
    }
}
