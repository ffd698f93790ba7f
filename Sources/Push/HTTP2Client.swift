import CCurlShim
import Jobs
#if canImport(Glibc)
import Glibc
#endif

/// One request for `HTTP2Client.perform`.
public struct HTTP2Request: Sendable {
    public var method = "POST"
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(method: String = "POST", url: String, headers: [(String, String)], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// What one request got: a status and body, or a transport error.
public struct HTTP2Response: Sendable {
    public let status: Int?
    public let retryAfter: Int?
    public let body: [UInt8]
    public let httpVersion: Int
    public let error: String?
}

/// A long-lived HTTP/2 client (`CCurlShim/roost_h2.c`: nghttp2 and OpenSSL,
/// libcurl for a server without h2 or behind a proxy): a batch of requests
/// goes out together as streams of one connection per host, and the
/// connections stay open for the next batch. Confined to one thread.
public final class HTTP2Client {
    private let client: OpaquePointer

    /// - Parameter caFile: a PEM bundle to trust instead of the system's CAs (tests' stand-ins).
    public init(caFile: String?) throws {
        var err = [CChar](repeating: 0, count: 256)
        guard let c = roost_h2_new(caFile, &err, err.count) else {
            throw PushError(String(decoding: err.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        client = c
        roost_h2_set_give_way(Int(GiveWay.stretchNanoseconds))  // the C loops give way as often as Swift's
    }

    deinit { roost_h2_free(client) }

    /// Connections opened so far (a reused connection is not counted again).
    public var connections: Int { Int(roost_h2_connections(client)) }

    /// Performs every request at once, waiting at most `timeoutMilliseconds` for all.
    public func perform(_ requests: [HTTP2Request], timeoutMilliseconds: Int) -> [HTTP2Response] {
        guard !requests.isEmpty else { return [] }
        var strings: [UnsafeMutablePointer<CChar>?] = []
        defer { strings.forEach { free($0) } }
        func keep(_ s: String) -> UnsafePointer<CChar>? {
            let p = strdup(s)
            strings.append(p)
            return UnsafePointer(p)
        }
        let headerLists: [[UnsafePointer<CChar>?]] = requests.map { r in r.headers.map { keep("\($0.0): \($0.1)") } }
        let bodies: [UnsafeMutableRawPointer?] = requests.map { r in
            let p = malloc(max(r.body.count, 1))
            r.body.withUnsafeBytes { if let base = $0.baseAddress { p?.copyMemory(from: base, byteCount: r.body.count) } }
            return p
        }
        defer { bodies.forEach { free($0) } }
        var headerBuffers: [UnsafeMutablePointer<UnsafePointer<CChar>?>] = headerLists.map { list in
            let buffer = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(list.count, 1))
            buffer.initialize(from: list, count: list.count)
            return buffer
        }
        defer { headerBuffers.forEach { $0.deallocate() }; headerBuffers.removeAll() }
        var c = requests.indices.map { i in
            roost_h2_request(method: keep(requests[i].method), url: keep(requests[i].url), headers: UnsafePointer(headerBuffers[i]),
                             header_count: headerLists[i].count, body: UnsafeRawPointer(bodies[i]), body_len: requests[i].body.count)
        }
        var out = [roost_h2_response](repeating: roost_h2_response(), count: requests.count)
        _ = roost_h2_perform(client, &c, &out, requests.count, timeoutMilliseconds)
        defer { roost_h2_release(&out, out.count) }
        var giveWay = GiveWay()
        return out.map { r in
            giveWay.check()
            var copy = r
            let error = withUnsafeBytes(of: &copy.error) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
            let body: [UInt8] = r.body.map { Array(UnsafeRawBufferPointer(start: $0, count: r.body_len)) } ?? []
            if !error.isEmpty || r.status == 0 {
                return HTTP2Response(status: nil, retryAfter: nil, body: [], httpVersion: 0, error: error.isEmpty ? "no response" : error)
            }
            return HTTP2Response(status: Int(r.status), retryAfter: r.retry_after >= 0 ? Int(r.retry_after) : nil, body: body,
                                 httpVersion: Int(r.http_version), error: nil)
        }
    }
}

/// A push setup or provider failure, with a message safe to log (never a secret).
public struct PushError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
