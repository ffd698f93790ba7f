import Files
import EventLoop
import HTTP
import Store

/// A response for stored bytes: strong ETag with `If-None-Match` → 304,
/// a single byte `Range` → 206 (416 when unsatisfiable), `Cache-Control`,
/// `nosniff`, and `Content-Disposition: attachment` for types that are not
/// safe to render inline.
struct FileResponse {
    let response: Response

    /// - Parameter read: opens `length` bytes (all when nil) from `offset`, on this worker thread.
    init(request: Request, etag: String, contentType: MediaType, size: Int, filename: String?, cacheControl: String,
         read: (Int, Int?) throws -> FileSegment) throws {
        var headers = Headers()
        headers.add("ETag", etag)
        headers.add("Cache-Control", cacheControl)
        headers.add("Accept-Ranges", "bytes")
        headers.add("X-Content-Type-Options", "nosniff")
        if Self.matches(request.headers["If-None-Match"], etag) {
            response = Response(status: 304, headers: headers)
            return
        }
        headers.add("Content-Type", contentType.name)
        if contentType.isSafeInline {
            headers.add("Content-Disposition", "inline")
        } else {
            headers.add("Content-Disposition", "attachment" + Self.filenameParameter(filename))
            headers.add("Content-Security-Policy", "default-src 'none'; sandbox")
        }
        var status = 200
        var offset = 0
        var length: Int?
        let ifRange = request.headers["If-Range"]
        if let range = request.headers["Range"], ifRange == nil || ifRange == etag {
            switch Self.parseRange(range, size: size) {
            case .whole: break
            case .unsatisfiable:
                var e = HTTPError(.rangeNotSatisfiable, "The range \(range) is outside the file's \(size) bytes.").response
                e.headers.add("Content-Range", "bytes */\(size)")
                e.headers.add("ETag", etag)
                response = e
                return
            case .bytes(let first, let last):
                status = 206
                offset = first
                length = last - first + 1
                headers.add("Content-Range", "bytes \(first)-\(last)/\(size)")
            }
        }
        if request.method == .head {
            headers.add("Content-Length", "\(length ?? size)")
            response = Response(status: status, headers: headers)
            return
        }
        switch try read(offset, length) {
        case .cached(let file): response = Response(status: status, headers: headers, file: file)
        case .bytes(let bytes): response = Response(status: status, headers: headers, body: bytes)
        }
    }

    /// True when an `If-None-Match` list names `etag` (or is `*`).
    static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { part in
            let tag = part.trimmingSpaces
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    enum RangeRequest: Equatable {
        case whole
        case unsatisfiable
        case bytes(Int, Int)
    }

    /// One `bytes=` range; several ranges or malformed ones mean the whole file (RFC 9110 allows ignoring Range).
    static func parseRange(_ header: String, size: Int) -> RangeRequest {
        let trimmed = header.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes="), !trimmed.contains(",") else { return .whole }
        let spec = trimmed.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return .whole }
        let a = spec[0].trimmingSpaces, b = spec[1].trimmingSpaces
        if a.isEmpty {
            guard let suffix = Int(b), suffix >= 0 else { return .whole }
            if suffix == 0 || size == 0 { return .unsatisfiable }
            return .bytes(max(0, size - suffix), size - 1)
        }
        guard let first = Int(a), first >= 0 else { return .whole }
        let last = b.isEmpty ? size - 1 : (Int(b) ?? -1)
        guard last >= first || b.isEmpty else { return .whole }
        if first >= size { return .unsatisfiable }
        return .bytes(first, min(last, size - 1))
    }

    /// `; filename="…"` with only safe ASCII, plus RFC 5987 `filename*` for the rest.
    static func filenameParameter(_ name: String?) -> String {
        guard let name, !name.isEmpty else { return "" }
        let ascii = String(name.unicodeScalars.map { s -> Character in
            (s.value >= 0x20 && s.value < 0x7F && s != "\"" && s != "\\" && s != "/" && s != ";") ? Character(s) : "_"
        })
        var encoded = ""
        for byte in name.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || "-._~".contains(c) {
                encoded.append(c)
            } else {
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return "; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }
}
