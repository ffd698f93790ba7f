import Backup
import EventLoop
import Files
import Foundation
import HTTP
import Jobs
import JSON
import Logging
import Store

/// The file API: uploads, downloads, metadata, thumbnails, deletes.
///
/// The loop only checks sizes and queues: an upload worker inspects the
/// bytes (real type, pixel count, full decode), writes the file durably,
/// then hands the metadata row and its thumbnail job to the writer's group
/// commit; the client hears 201 only after COMMIT.
struct FileHandlers: Sendable {
    typealias UploadJob = @Sendable (DocumentReader) -> Void

    let pools: StorePools
    let access: AccessPolicy
    let uploads: WorkerPool<DocumentReader, UploadJob>
    let thumbnails: ThumbnailScheduler
    /// Where the bytes live: the local file store or an S3 bucket.
    let objects: any ObjectStore
    let inspector: UploadInspector
    let level: AccessScope.Level
    let ids = DocumentID()
    let logger: Logger

    /// Extra room a multipart body may take around its file part.
    static let multipartSlack = 64 * 1024

    static let collection = "files"

    init(pools: StorePools, access: AccessPolicy, config: RoostConfig, thumbnails: ThumbnailScheduler, objects: any ObjectStore,
         logger: Logger) {
        self.pools = pools
        self.objects = objects
        self.access = access
        self.thumbnails = thumbnails
        self.logger = logger
        inspector = UploadInspector(maxBytes: config.maxUploadBytes, maxPixels: config.maxImagePixels,
                                    validation: config.uploadValidation)
        level = config.filesPermission
        let databasePath = config.dataDir + "/roost.db"
        uploads = WorkerPool(name: "upload", threads: config.uploadWorkers, capacity: config.uploadQueue, logger: logger,
                             makeContext: { try DocumentReader(path: databasePath) },
                             run: { reader, jobs in for job in jobs { job(reader) } })
    }

    /// The largest body evhttp must accept for an upload to reach us.
    static func bodyCap(_ config: RoostConfig) -> Int { config.maxUploadBytes + multipartSlack }

    func scope(_ request: Request, _ reader: DocumentReader) throws -> AccessScope {
        AccessScope(principal: try access.caller(request, reader).principal, level: level)
    }

    /// The file API's routes (`/files/_deltaset` and `/files/_live` are the collection feeds, in `Router`).
    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/files", [.post: { r, out in handlers.upload(r, out) }]),
            RoostRoute("/files/:id", [.get: { r, out in handlers.serve(r.segments[1], r, out) },
                                      .delete: { r, out in handlers.delete(r.segments[1], r, out) }]),
            RoostRoute("/files/:id/meta", [.get: { r, out in handlers.meta(r.segments[1], r, out) }]),
            RoostRoute("/files/:id/thumbnail", [.get: { r, out in handlers.thumbnail(r.segments[1], r, out) }]),
            RoostRoute("/files/*", anyMethod: Router.noEndpoint),
        ]
    }

    /// `POST /files`: the raw bytes (or one multipart file part) → 201 and the metadata.
    func upload(_ request: Request, _ out: ResponseWriter) {
        let multipart = MediaType.declared(request.headers["Content-Type"]) == MediaType("multipart/form-data")
        let limit = inspector.maxBytes + (multipart ? Self.multipartSlack : 0)
        // Content-Length first: refuse as early as the client told us.
        if let declared = request.headers["Content-Length"].flatMap({ Int($0.trimmingSpacesAndTabs) }), declared > limit {
            return out.send(HTTPError.tooLarge(limit: inspector.maxBytes).response)
        }
        if request.body.count > limit { return out.send(HTTPError.tooLarge(limit: inspector.maxBytes).response) }
        if request.body.isEmpty { return out.send(UploadError.empty().httpError.response) }
        let handlers = self
        uploads.submit({ reader in
            do {
                try handlers.store(request, out, reader)
            } catch {
                out.send(ErrorResponses.response(for: error, request, handlers.logger))
            }
        }, orAnswer: out, .uploads)
    }

    /// On an upload worker: inspect, write durably, then record in the group commit.
    private func store(_ request: Request, _ out: ResponseWriter, _ reader: DocumentReader) throws {
        let scope = try scope(request, reader)
        try scope.checkCreate()
        let upload: InspectedUpload
        do { upload = try inspector.inspect(body: request.body, contentType: request.headers["Content-Type"]) } catch {
            if error.code == UploadError.imagesUnavailableCode { thumbnails.images.reportLoadFailure() }
            throw error
        }
        let id = ids.next()
        let type = upload.contentType
        try objects.putOriginal(id, bytes: upload.bytes, contentType: type.name, keepLocalCopy: upload.isImage)
        let metadata = metadata(id, upload)
        let (thumbnails, logger, objects) = (self.thumbnails, self.logger, self.objects)
        let job = StorePools.WriteJob(operation: { writer -> Response in
            .json(201, try writer.insertFile(id: id, metadata: metadata, thumbnailJob: upload.isImage, scope: scope))
        }, completion: { result in
            switch result {
            case .success:
                if upload.isImage { thumbnails.enqueue(FileJobRecord(fileID: id, contentType: type.name)) }
            case .failure:
                // No row: the file must not stay (the sweep would also find it).
                objects.discardUncommitted(id)
            }
            out.send(ErrorResponses.catching(request, logger) { try result.get() })
        })
        if !pools.writer.submit(job) {
            objects.discardUncommitted(id)
            throw Overload.writes.error
        }
    }

    /// A new upload's metadata: every configured thumbnail size pending.
    func metadata(_ id: String, _ upload: InspectedUpload) -> FileMetadata {
        let dimensions = upload.width.flatMap { w in upload.height.map { (width: w, height: $0) } }
        let pending = dimensions == nil ? [] : thumbnails.sizes.map { size in
            (size: "\(size)", state: ThumbnailState.pending(url: "/files/\(id)/thumbnail?size=\(size)"))
        }
        return FileMetadata(contentType: upload.contentType.name, size: upload.bytes.count, sha256: upload.sha256,
                            name: upload.filename, dimensions: dimensions, thumbnails: pending, url: "/files/\(id)")
    }

    /// `GET /files/:id/meta`.
    func meta(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        let handlers = self
        reading(request, out) { reader in
            guard let text = try reader.file(id: id, scope: try handlers.scope(request, reader)) else { throw Self.notFound(id) }
            return Preconditions.entityResponse(200, text)
        }
    }

    /// `DELETE /files/:id`: the row goes in the group commit, then the bytes.
    func delete(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        let (handlers, objects, logger, access, level) = (self, self.objects, self.logger, self.access, self.level)
        let job = StorePools.WriteJob(operation: { writer -> Response in
            let scope = AccessScope(principal: try access.caller(request, writer).principal, level: level)
            try writer.deleteFile(id: id, scope: scope)
            return .json(200, "{\"count\":1}")
        }, completion: { result in
            if case .success = result {
                // After COMMIT: a crash before these unlinks leaves files the
                // sweep removes. While a backup runs they wait (its snapshot
                // may have been taken before this delete).
                let remove: @Sendable () -> Void = { objects.remove(id) }
                if !handlers.uploads.submit({ _ in remove() }) { remove() }
            }
            out.send(ErrorResponses.catching(request, logger) { try result.get() })
        })
        pools.writer.submit(job, orAnswer: out, .writes)
    }

    static func notFound(_ id: String) -> HTTPError { .notFound("No file with _id \"\(id)\".") }
}

extension String {
    var trimmingSpacesAndTabs: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
