import EventLoop
import Files
import Foundation
import HTTP
import JSON
import Store

/// Serving stored bytes: `GET /files/:id` and `GET /files/:id/thumbnail`.
/// Bytes are read on a worker thread, never on the loop: local files on the
/// reader that checked access, objects in S3 on the upload pool (a slow
/// bucket must not hold the database readers).
extension FileHandlers {
    /// `GET /files/:id`.
    func serve(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        let (handlers, limit) = (self, inspector.maxBytes)
        readingFile(id, request, out, variant: { SignedFileURL.original }) { reader, scope, cacheControl in
            guard let stored = try reader.fileForServing(id: id, scope: scope) else {
                throw Self.notFound(id)
            }
            return try handlers.fetching(request, out) {
                try FileResponse(request: request, etag: "\"\(stored.sha256)\"", contentType: MediaType(stored.contentType),
                                 size: stored.size, filename: stored.name, cacheControl: cacheControl,
                                 read: { offset, length in
                    guard let segment = try handlers.objects.openOriginal(id, offset: offset, length: length, limit: limit) else {
                        throw Self.notFound(id)
                    }
                    return segment
                }).response
            }
        }
    }

    /// Runs `body`, which reads stored bytes, here (local files) or on the
    /// upload pool (S3; 503 when it is full). Nil when handed on: the pool answers.
    func fetching(_ request: Request, _ out: ResponseWriter, _ body: @escaping @Sendable () throws -> Response?) throws -> Response? {
        if objects.isLocal { return try body() }
        let logger = self.logger
        uploads.submit({
            do {
                if let response = try body() { out.send(response) }
            } catch {
                out.send(ErrorResponses.response(for: error, request, logger))
            }
        }, orAnswer: out, .uploads)
        return nil
    }

    /// Immutable: a file id never names other bytes. Shared and private
    /// files must not sit in shared caches.
    var cacheControl: String {
        level == .public ? "public, max-age=31536000, immutable" : "private, max-age=31536000, immutable"
    }

    /// The variant a thumbnail request asks for: `size=N`, or `w`/`h` with `fit`.
    static func thumbnailSpec(_ query: [String: String], defaultSize: Int) throws -> ThumbnailSpec {
        func edge(_ key: String) throws -> Int? {
            guard let raw = query[key] else { return nil }
            guard let v = Int(raw), (1...ThumbnailSpec.maxEdge).contains(v) else {
                throw HTTPError(.invalidQuery, "\(key) must be a whole number from 1 to \(ThumbnailSpec.maxEdge).")
            }
            return v
        }
        if let size = try edge("size") { return .longest(size) }
        let w = try edge("w"), h = try edge("h")
        let fit = query["fit"] ?? "contain"
        guard fit == "cover" || fit == "contain" else { throw HTTPError(.invalidQuery, "fit must be cover or contain.") }
        switch (w, h) {
        case (nil, nil): return .longest(defaultSize)
        case let (w?, h?): return ThumbnailSpec(width: w, height: h, crop: fit == "cover")
        case let (w?, nil): return ThumbnailSpec(width: w, height: ThumbnailSpec.maxEdge * 4, crop: false)
        case let (nil, h?): return ThumbnailSpec(width: ThumbnailSpec.maxEdge * 4, height: h, crop: false)
        }
    }

    /// `GET /files/:id/thumbnail?size=128` (or `?w=&h=&fit=`): a stored
    /// thumbnail, or one made now on the thumbnail pool.
    func thumbnail(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        let (handlers, scheduler, logger) = (self, thumbnails, self.logger)
        let defaultSize = thumbnails.sizes.first ?? 128
        // Who asks, then whether they may see the file, then what they ask
        // for: a bad token is 401 and a file they may not read 404, whatever the query.
        // A signed URL's signature covers the size, so its query is read first (`readingFile`).
        let variant: @Sendable () throws -> String = {
            SignedFileURL.thumbnail(try Self.thumbnailSpec(request.query, defaultSize: defaultSize).name)
        }
        readingFile(id, request, out, variant: variant) { reader, scope, cacheControl in
            guard let stored = try reader.fileForServing(id: id, scope: scope) else {
                throw Self.notFound(id)
            }
            let type = MediaType(stored.contentType)
            guard stored.isImage else { throw HTTPError.notFound("File \"\(id)\" is \(type), which has no thumbnails.") }
            let spec = try Self.thumbnailSpec(request.query, defaultSize: defaultSize)
            let etag = "\"\(stored.sha256)-\(spec.name)\""
            let thumbType = MediaType.of(type.thumbnailFormat)
            @Sendable func respond(_ bytes: [UInt8]) throws -> Response {
                try FileResponse(request: request, etag: etag, contentType: thumbType, size: bytes.count, filename: nil,
                                 cacheControl: cacheControl, read: { offset, length in
                    .bytes(Array(bytes[offset..<min(bytes.count, offset + (length ?? bytes.count))]))
                }).response
            }
            if FileResponse.matches(request.headers["If-None-Match"], etag) {
                return try respond([])
            }
            let name = scheduler.thumbnailer.name(type, spec)
            return try handlers.fetching(request, out) {
                if let stored = try handlers.objects.openThumbnail(id, name: name, limit: handlers.inspector.maxBytes) {
                    return try FileResponse(request: request, etag: etag, contentType: thumbType, size: stored.size, filename: nil,
                                            cacheControl: cacheControl, read: stored.read).response
                }
                scheduler.variant(id, type, spec) { outcome in
                    out.send(ErrorResponses.catching(request, logger) {
                        do { return try respond(try outcome.get().bytes) } catch let e as Vips.Unavailable {
                            throw scheduler.images.unavailable(e)
                        } catch let e as Vips.Failure {
                            logger.warning("thumbnail failed", metadata: ["file": "\(id)", "variant": "\(spec.name)", "error": "\(e)"])
                            throw HTTPError(.invalidImage, "No thumbnail can be made of this file.")
                        }
                    })
                }
                return nil
            }
        }
    }
}
