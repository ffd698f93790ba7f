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

/// The answer to one GET: status, body and Cache-Control, or a transport error.
public struct GetResult: Sendable {
    public let status: Int?
    public let body: [UInt8]
    public let cacheControl: String?
    public let error: String?
}

/// Blocking HTTP GETs through libcurl (provider discovery and key sets), for worker threads only.
public enum HTTPGetter {
    public static func get(url: String, timeoutMilliseconds: Int, maxBytes: Int = 1 << 20) -> GetResult {
        var result = roost_curl_result()
        var body: UnsafeMutablePointer<CChar>? = nil
        var length = 0
        var cacheControl = [CChar](repeating: 0, count: 256)
        let rc = roost_curl_get(url, timeoutMilliseconds, maxBytes, &body, &length, &cacheControl, cacheControl.count, &result)
        defer { roost_curl_free(body) }
        if rc != 0 {
            let message = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            return GetResult(status: nil, body: [], cacheControl: nil, error: message.isEmpty ? "transport error" : message)
        }
        let bytes = body.map { pointer in pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) } } ?? []
        let cc = String(decoding: cacheControl.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return GetResult(status: Int(result.status), body: bytes, cacheControl: cc.isEmpty ? nil : cc, error: nil)
    }
}

/// The answer to one form POST: status and body, or a transport error.
public struct FormPostResult: Sendable {
    public let status: Int?
    public let body: [UInt8]
    public let error: String?
}

extension HTTPPoster {
    /// A blocking `application/x-www-form-urlencoded` POST that keeps the
    /// answer's body (OAuth token and revocation endpoints), for worker threads only.
    public static func postForm(url: String, fields: [(String, String)], timeoutMilliseconds: Int, maxBytes: Int = 64 * 1024) -> FormPostResult {
        let form = fields.map { formEncode($0.0) + "=" + formEncode($0.1) }.joined(separator: "&")
        var result = roost_curl_result()
        var body: UnsafeMutablePointer<CChar>? = nil
        var length = 0
        let bytes = Array(form.utf8)
        let rc = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(bytes.count, 1)) {
                roost_curl_post_form(url, $0, bytes.count, timeoutMilliseconds, maxBytes, &body, &length, &result)
            }
        }
        defer { roost_curl_free(body) }
        if rc != 0 {
            let message = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            return FormPostResult(status: nil, body: [], error: message.isEmpty ? "transport error" : message)
        }
        let answer = body.map { p in p.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) } } ?? []
        return FormPostResult(status: Int(result.status), body: answer, error: nil)
    }

    /// RFC 3986 unreserved characters stay; every other byte is %XX.
    static func formEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
