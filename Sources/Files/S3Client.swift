import CCurlShim
import Foundation

/// A failed S3 request: the HTTP status and S3's error code, or a transport
/// failure (status 0). Never carries credentials.
public struct S3Error: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let status: Int
    /// S3's `<Code>` (e.g. `NoSuchBucket`, `SignatureDoesNotMatch`), or the transport's description.
    public let code: String
    public let message: String

    public var description: String {
        status == 0 ? "\(operation): S3 unreachable (\(code))" : "\(operation): S3 answered \(status) \(code)\(message.isEmpty ? "" : ": " + message)"
    }
}

/// S3 calls over libcurl (see `roost_s3.h`), signed by libcurl's SigV4.
/// Synchronous: called on upload, reader and thumbnail worker threads.
public struct S3Client: Sendable {
    public let settings: S3Settings
    let base: String
    let sigv4: String
    let userpwd: String

    public init(settings: S3Settings) {
        self.settings = settings
        var endpoint = settings.endpoint
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        base = endpoint + "/" + settings.bucket
        sigv4 = "aws:amz:\(settings.region):s3"
        userpwd = settings.accessKeyID + ":" + settings.secretAccessKey
    }

    /// One answer: status, ETag, the in-memory body (errors, listings) and bytes written to a descriptor.
    struct Reply {
        let status: Int
        let etag: String
        let bytes: [UInt8]
        let written: Int
        var body: String { String(decoding: bytes, as: UTF8.self) }
        var ok: Bool { (200..<300).contains(status) }
    }

    /// The URL of `key` with `query` pairs, sorted and encoded as SigV4's canonical form wants them.
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    func url(_ key: String, _ query: [(String, String)]) -> String {
        let path = key.isEmpty ? base + "/" : base + "/" + S3Keys.encode(key, keepSlash: true)
        guard !query.isEmpty else { return path }
        let pairs = query.map { (S3Keys.encode($0.0, keepSlash: false), S3Keys.encode($0.1, keepSlash: false)) }
            .sorted { $0.0 < $1.0 }
        return path + "?" + pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    func perform(_ operation: String, _ method: String, key: String, query: [(String, String)] = [], headers: [String] = [],
                 body: UnsafeRawBufferPointer? = nil, into fd: Int32 = -1) throws -> Reply {
        let target = url(key, query)
        // SigV4 for S3 needs the payload's hash as a header; libcurl 7.88
        // signs the same hash but does not send the header itself.
        let headers = headers + ["x-amz-content-sha256: " + (body.map { SHA256.hex($0) } ?? Self.emptyHash)]
        var response = roost_s3_response()
        defer { roost_s3_release(&response) }
        let rc: Int32 = method.withCString { m in target.withCString { u in sigv4.withCString { s in userpwd.withCString { p in
            let cHeaders = headers.map { strdup($0) }
            defer { cHeaders.forEach { free($0) } }
            return cHeaders.map { UnsafePointer<CChar>($0) }.withUnsafeBufferPointer { h in
                var request = roost_s3_request(method: m, url: u, sigv4: s, userpwd: p, headers: h.baseAddress, header_count: h.count,
                                               body: body?.baseAddress, body_len: body?.count ?? 0, out_fd: fd,
                                               timeout_ms: settings.timeoutMs, connect_timeout_ms: settings.connectTimeoutMs,
                                               insecure: settings.insecureTLS ? 1 : 0)
                return roost_s3_perform(&request, &response)
            }
        } } } }
        let raw = response.body.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: response.body_len)) } ?? []
        if rc != 0 {
            let why = withUnsafeBytes(of: response.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw S3Error(operation: operation, status: 0, code: why, message: "")
        }
        let etag = withUnsafeBytes(of: response.etag) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Reply(status: response.status, etag: etag, bytes: raw, written: Int(response.written))
    }

    func failure(_ operation: String, _ reply: Reply) -> S3Error {
        S3Error(operation: operation, status: reply.status, code: S3XML.value("Code", in: reply.body) ?? "HTTP\(reply.status)",
                message: S3XML.value("Message", in: reply.body) ?? "")
    }

    // MARK: Objects

    /// Stores `bytes` under `key`; in parts when larger than the multipart threshold.
    public func put(_ key: String, _ bytes: [UInt8], contentType: String) throws {
        if settings.usesMultipart(bytes.count) { return try putInParts(key, bytes, contentType: contentType) }
        let reply = try bytes.withUnsafeBytes { try perform("PutObject", "PUT", key: key, headers: ["Content-Type: " + contentType], body: $0) }
        guard reply.ok else { throw failure("PutObject", reply) }
    }

    /// Writes the object (or `range`, e.g. `bytes=0-99`) to `fd`: the bytes written, or nil when there is no such object.
    public func get(_ key: String, range: String? = nil, into fd: Int32) throws -> Int? {
        let reply = try perform("GetObject", "GET", key: key, headers: range.map { ["Range: " + $0] } ?? [], into: fd)
        if reply.status == 404 { return nil }
        guard reply.ok else { throw failure("GetObject", reply) }
        return reply.written
    }

    /// The object's bytes (small objects: thumbnails), or nil when absent.
    public func bytes(_ key: String) throws -> [UInt8]? {
        let reply = try perform("GetObject", "GET", key: key)
        if reply.status == 404 { return nil }
        guard reply.ok else { throw failure("GetObject", reply) }
        return reply.bytes
    }

    /// True when `key` exists.
    public func exists(_ key: String) throws -> Bool {
        let reply = try perform("HeadObject", "HEAD", key: key)
        if reply.status == 404 { return false }
        guard reply.ok else { throw failure("HeadObject", reply) }
        return true
    }

    public func delete(_ key: String) throws {
        let reply = try perform("DeleteObject", "DELETE", key: key)
        guard reply.ok || reply.status == 404 else { throw failure("DeleteObject", reply) }
    }

    /// Every key under `prefix` with its last-modified time (ListObjectsV2, page by page).
    public func list(prefix: String, limit: Int = .max) throws -> [(key: String, modified: Date)] {
        var out: [(key: String, modified: Date)] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            if limit < 1000 { query.append(("max-keys", "\(limit)")) }
            let reply = try perform("ListObjectsV2", "GET", key: "", query: query)
            guard reply.ok else { throw failure("ListObjectsV2", reply) }
            out += S3XML.listing(reply.body)
            token = S3XML.value("IsTruncated", in: reply.body) == "true" ? S3XML.value("NextContinuationToken", in: reply.body) : nil
        } while token != nil && out.count < limit
        return out
    }

    /// Start-up check: the bucket answers a signed listing. Throws with S3's
    /// reason (`NoSuchBucket`, `InvalidAccessKeyId`, `SignatureDoesNotMatch`, unreachable).
    public func checkBucket() throws {
        _ = try list(prefix: S3Keys(prefix: settings.prefix).root, limit: 1)
    }
}
