import EventLoop
import Files
import Foundation
import HTTP
import JSON
import Store

/// `POST /files/:id/url`, and serving the signed URLs it makes (`SignedFileURL`).
extension FileHandlers {
    /// `POST /files/:id/url` `{ttl?, thumbnail?}` → `{url, expires, expiresAt}`:
    /// a URL that loads the file (or one thumbnail size) with no Authorization
    /// header until it expires. Only a caller who may read the file gets one;
    /// anyone else gets the 404 a read gives, whatever the body.
    func signURL(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        let (maxTTL, defaultSize) = (fileURLMaxTTL, thumbnails.sizes.first ?? 128)
        jobs.read(request, out, in: Self.collection, level: level) { reader, scope in
            guard let stored = try reader.fileForServing(id: id, scope: scope) else { throw Self.notFound(id) }
            let ask = try SignedURLAsk(request.body, maxTTL: maxTTL, defaultSize: defaultSize)
            var path = "/files/\(id)", variant = SignedFileURL.original, query = ""
            if let parameters = ask.thumbnailParameters, let items = ask.thumbnailQuery {
                guard stored.isImage else { throw HTTPError.notFound("File \"\(id)\" is \(stored.contentType), which has no thumbnails.") }
                let spec = try Self.thumbnailSpec(parameters, defaultSize: defaultSize)
                path += "/thumbnail"
                variant = SignedFileURL.thumbnail(spec.name)
                query = items.map { "\($0.0)=\($0.1)" }.joined(separator: "&") + "&"
            }
            let claim = SignedFileURL(id: id, variant: variant, expires: SignedFileURL.now + Int64(ask.ttl))
            let url = path + "?" + query + claim.queryItems(try reader.cursorSeal())
            let expiresAt = Timestamp.format(Date(timeIntervalSince1970: Double(claim.expires)))
            var response = Response.json(200, "{\"url\":\(JSONWriter.quoted(url)),\"expires\":\(claim.expires),\"expiresAt\":\(JSONWriter.quoted(expiresAt))}")
            response.headers.add("Cache-Control", "no-store")
            return response
        }
    }

    /// Runs `body` on a reader with the scope that reads file `id` and the
    /// `Cache-Control` its bytes go out with: the caller's (session or
    /// anonymous) scope, or, for a signed URL, the system's once the
    /// signature holds for this file and `variant` (never cached past its expiry).
    func readingFile(_ id: String, _ request: Request, _ out: ResponseWriter, variant: @escaping @Sendable () throws -> String,
                     _ body: @escaping @Sendable (any DocumentReading, AccessScope, String) throws -> Response?) {
        guard SignedFileURL.isSigned(request.query) else {
            let cacheControl = self.cacheControl
            return jobs.read(request, out, in: Self.collection, level: level) { reader, scope in try body(reader, scope, cacheControl) }
        }
        pools.readStep(request, out) { reader in
            let named: String
            do { named = try variant() } catch { throw SignedFileURL.invalid } // not a size we could have signed
            let remaining = try SignedFileURL.check(request.query, id: id, variant: named, seal: try reader.cursorSeal(), now: SignedFileURL.now)
            return try body(reader, .system, "private, max-age=\(remaining)")
        }
    }
}
