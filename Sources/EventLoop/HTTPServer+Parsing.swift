import CEvent
import Foundation
import HTTP

/// Turning evhttp's parsed pieces into Swift values, on the loop.
extension HTTPServer {
    /// The path's non-empty `/`-separated parts, each percent-decoded.
    /// Works on the UTF-8 bytes: this runs on the loop for every request.
    static func segments(_ path: String) -> [String] {
        var path = path
        return path.withUTF8 { bytes in
            var parts: [String] = []
            var start = 0
            for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "/") {
                if i > start { parts.append(decodedSegment(UnsafeBufferPointer(rebasing: bytes[start..<i]))) }
                start = i + 1
            }
            return parts
        }
    }

    private static func decodedSegment(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let part = String(decoding: bytes, as: UTF8.self)
        guard bytes.contains(UInt8(ascii: "%")) else { return part }
        var length = 0
        guard let decoded = evhttp_uridecode(part, 0, &length) else { return part }
        defer { free(decoded) }
        return String(decoding: UnsafeRawBufferPointer(start: decoded, count: length), as: UTF8.self)
    }

    static func parseQuery(_ raw: UnsafePointer<CChar>?) -> [String: String] {
        guard let raw, raw.pointee != 0 else { return [:] }
        let list = UnsafeMutablePointer<evkeyvalq>.allocate(capacity: 1)
        defer { list.deallocate() }
        list.pointee.tqh_first = nil
        list.pointee.tqh_last = UnsafeMutableRawPointer(list).assumingMemoryBound(to: UnsafeMutablePointer<evkeyval>?.self)
        guard evhttp_parse_query_str(raw, list) == 0 else { evhttp_clear_headers(list); return [:] }
        defer { evhttp_clear_headers(list) }
        var out: [String: String] = [:]
        var node = list.pointee.tqh_first
        while let n = node {
            let key = String(cString: n.pointee.key)
            if out[key] == nil { out[key] = String(cString: n.pointee.value) }
            node = n.pointee.next.tqe_next
        }
        return out
    }

    static func headers(_ list: UnsafeMutablePointer<evkeyvalq>?) -> Headers {
        var headers = Headers()
        var node = list?.pointee.tqh_first
        while let n = node {
            headers.add(String(cString: n.pointee.key), String(cString: n.pointee.value))
            node = n.pointee.next.tqe_next
        }
        return headers
    }

    /// Requests whose connection is closed after the reply, as the gate reads
    /// no further request heads after them: a chunked one (the gate knows where
    /// a Content-Length body ends, not where a chunked one does), and a HEAD or
    /// TRACE with a body (libevent 2.1 never reads it: its bytes would be
    /// parsed as the next request).
    static func closesAfterReply(_ command: evhttp_cmd_type, _ headers: Headers) -> Bool {
        if headers["Transfer-Encoding"] != nil { return true }
        guard command == EVHTTP_REQ_HEAD || command == EVHTTP_REQ_TRACE else { return false }
        if let length = headers["Content-Length"], length.utf8.contains(where: { $0 != UInt8(ascii: "0") }) { return true }
        return false
    }

    static func body(_ buffer: OpaquePointer?) -> [UInt8] {
        guard let buffer else { return [] }
        let length = evbuffer_get_length(buffer)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: length) { storage, initialized in
            initialized = Int(evbuffer_copyout(buffer, storage.baseAddress, length))
        }
    }
}
