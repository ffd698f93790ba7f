import RoostTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import RoostKit

/// A real roostd for one test, and clients of it.
final class Fixture: @unchecked Sendable {
    static let config = """
        default_permission: shared
        files_permission: shared
        loops: 1
        readers: 2
        collections:
          locations:
            indexes: [name, categories, "location:geo"]
          notes:
            permission: private
        """

    let server: RoostProcess
    let baseURL: URL
    let scratch: URL

    init(config: String = Fixture.config) throws {
        server = try RoostProcess(config: config)
        baseURL = URL(string: server.baseURL)!
        scratch = server.dataDir.appendingPathComponent("clients")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    /// A client with no session.
    func client(transport: HTTPTransport = URLSessionTransport(), tokenStore: TokenStore = MemoryTokenStore()) -> RoostClient {
        RoostClient(baseURL: baseURL, tokenStore: tokenStore, transport: transport)
    }

    /// A client signed up as a fresh user named after `name`.
    func user(_ name: String, transport: HTTPTransport = URLSessionTransport()) async throws -> RoostClient {
        let c = client(transport: transport)
        try await c.signUp(username: "\(name)-\(UUID().uuidString.prefix(8).lowercased())", password: "password-\(name)",
                           profile: ["firstName": JSONValue.string(name.capitalized)])
        return c
    }

    /// A store file path for a test client.
    func storeURL(_ name: String) -> URL { scratch.appendingPathComponent("\(name).sqlite") }
}

/// A transport that refuses every request while `online` is false, as a
/// device without a network does; that can lose the answers of the next
/// `loseAnswers` requests after the server has applied them (the app
/// suspended, the connection dropped); and that answers requests whose path
/// ends with one of `failing` with a 500 `HookFailed`, as a server whose hook
/// keeps refusing one document does.
final class SwitchableTransport: HTTPTransport, @unchecked Sendable {
    private let base = URLSessionTransport()
    private let lock = NSLock()
    private var isOnline = true
    private var answersToLose = 0
    private var failingPaths: Set<String> = []
    private var hanging = false
    private var held: [AsyncThrowingStream<Data, Error>.Continuation] = []
    private(set) var refused = 0

    /// While true, a new stream "connects" (200) and then never delivers a
    /// byte nor ends: the connection a network change left dead.
    var hangStreams: Bool {
        get { lock.withLock { hanging } }
        set { lock.withLock { hanging = newValue } }
    }

    var online: Bool {
        get { lock.withLock { isOnline } }
        set { lock.withLock { isOnline = newValue } }
    }

    var loseAnswers: Int {
        get { lock.withLock { answersToLose } }
        set { lock.withLock { answersToLose = newValue } }
    }

    var failing: Set<String> {
        get { lock.withLock { failingPaths } }
        set { lock.withLock { failingPaths = newValue } }
    }

    private func check() throws {
        try lock.withLock {
            if !isOnline { refused += 1; throw URLError(.notConnectedToInternet) }
        }
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try check()
        let path = request.url?.path ?? ""
        if request.httpMethod != "GET", failing.contains(where: { path.hasSuffix($0) }) {
            let body = Data(#"{"error":"HookFailed","description":"a hook refused this write"}"#.utf8)
            return (body, HTTPURLResponse(url: request.url!, statusCode: 500, httpVersion: "HTTP/1.1",
                                          headerFields: ["Content-Type": "application/json"])!)
        }
        let answer = try await base.send(request)
        let lose = lock.withLock { () -> Bool in
            guard answersToLose > 0 else { return false }
            answersToLose -= 1
            return true
        }
        if lose { throw URLError(.networkConnectionLost) }
        return answer
    }

    func stream(_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, Error>) {
        try check()
        if hangStreams {
            let (dead, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
            lock.withLock { held.append(continuation) }
            return (HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                                    headerFields: ["Content-Type": "text/event-stream"])!, dead)
        }
        return try await base.stream(request)
    }
}

/// A note in the private `notes` collection.
struct Note: Codable, Sendable, Equatable {
    var title: String
    var body: String?
    var stars: Int?
}

/// A place in the `locations` collection (the Tour My Town app's model).
struct Location: Codable, Sendable, Equatable {
    var name: String
    var location: [Double]
    var categories: [String]?
}

/// A message in the messaging app's `messages` collection.
struct Message: Codable, Sendable, Equatable {
    var recipientId: String?
    var text: String
    var senderId: String?
    var threadId: String?
}

enum TestImages {
    /// A valid 16×16 RGB PNG (stored deflate blocks, so no zlib needed).
    static var png: Data {
        let (w, h) = (16, 16)
        var raw = Data()
        for y in 0..<h {
            raw.append(0)
            for x in 0..<w { raw.append(contentsOf: [UInt8(x * 16), UInt8(y * 16), 128]) }
        }
        var zlib = Data([0x78, 0x01, 0x01])
        let n = UInt16(raw.count)
        zlib.append(contentsOf: [UInt8(n & 0xff), UInt8(n >> 8), UInt8(~n & 0xff), UInt8(~n >> 8)])
        zlib.append(raw)
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        zlib.append(be32((b << 16) | a))
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.append(chunk("IHDR", be32(UInt32(w)) + be32(UInt32(h)) + Data([8, 2, 0, 0, 0])))
        png.append(chunk("IDAT", zlib))
        png.append(chunk("IEND", Data()))
        return png
    }

    private static func be32(_ v: UInt32) -> Data { Data([UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]) }

    private static func chunk(_ type: String, _ data: Data) -> Data {
        let body = Data(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return be32(UInt32(data.count)) + body + be32(~crc)
    }
}
