import CCurlShim

/// The answer to one POST: a status, or a transport error.
public struct PostResult: Sendable {
    public let status: Int?
    public let retryAfter: Int?
    public let error: String?
}

/// Blocking HTTP POSTs through libcurl, for worker threads only (never an event loop).
/// libcurl is loaded at the first POST, not at start-up; when it cannot be,
/// every POST fails as a transport error that names the library.
public enum HTTPPoster {
    public static func post(url: String, headers: [(String, String)], body: [UInt8], timeoutMilliseconds: Int) -> PostResult {
        var result = roost_curl_result()
        let lines = headers.map { "\($0.0): \($0.1)" }
        let cStrings = lines.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = cStrings.map { UnsafePointer($0) }
        let rc = pointers.withUnsafeBufferPointer { headerBuffer in
            body.withUnsafeBytes { bodyBuffer in
                roost_curl_post(url, headerBuffer.baseAddress, lines.count, bodyBuffer.baseAddress, body.count,
                                timeoutMilliseconds, &result)
            }
        }
        if rc != 0 {
            let message = withUnsafeBytes(of: result.error) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            return PostResult(status: nil, retryAfter: nil, error: message.isEmpty ? "transport error" : message)
        }
        return PostResult(status: Int(result.status), retryAfter: result.retry_after >= 0 ? Int(result.retry_after) : nil, error: nil)
    }
}

#if canImport(Glibc)
import Glibc
#endif
