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
/// commit; the client hears 201 only after COMMIT. Upload workers hold no
/// database connection: a caller with credentials is found on a reader
/// first (docs/SCALING.md, connections per node).
struct FileHandlers: Sendable {
    typealias UploadJob = @Sendable () -> Void

    let jobs: CallerJobs
    let uploads: WorkerPool<Void, UploadJob>
    let thumbnails: ThumbnailScheduler
    /// Where the bytes live: the local file store or an S3 bucket.
    let objects: any ObjectStore
    let inspector: UploadInspector
    let level: AccessScope.Level
    /// Longest life of a signed file URL (`file_url_max_ttl`).
    let fileURLMaxTTL: Int
    let ids = DocumentID()
    let logger: Logger

    /// Extra room a multipart body may take around its file part.
    static let multipartSlack = 64 * 1024

    static let collection = "files"

    init(jobs: CallerJobs, config: RoostConfig, thumbnails: ThumbnailScheduler, objects: any ObjectStore, logger: Logger) {
        self.jobs = jobs
        self.objects = objects
        self.thumbnails = thumbnails
        self.logger = logger
        inspector = UploadInspector(maxBytes: config.maxUploadBytes, maxPixels: config.maxImagePixels,
                                    validation: config.uploadValidation)
        level = config.filesPermission
        fileURLMaxTTL = config.fileURLMaxTTL
        uploads = WorkerPool(name: "upload", threads: config.uploadWorkers, capacity: config.uploadQueue, logger: logger,
                             makeContext: {}, run: { _, jobs in for job in jobs { job() } })
    }

    /// The largest body evhttp must accept for an upload to reach us.
    static func bodyCap(_ config: RoostConfig) -> Int { config.maxUploadBytes + multipartSlack }

    var pools: StorePools { jobs.pools }

    /// The file API's routes (`/files/_deltaset` and `/files/_live` are the collection feeds, in `Router`).
    var routes: [RoostRoute] {
        let handlers = self
        return [
            RoostRoute("/files", [.get: { r, out in handlers.ownFiles(r, out) }, .post: { r, out in handlers.upload(r, out) }]),
            RoostRoute("/files/:id", [.get: { r, out in handlers.serve(r.parameter("id"), r, out) },
                                      .delete: { r, out in handlers.delete(r.parameter("id"), r, out) }]),
            RoostRoute("/files/:id/meta", [.get: { r, out in handlers.meta(r.parameter("id"), r, out) }]),
            RoostRoute("/files/:id/thumbnail", [.get: { r, out in handlers.thumbnail(r.parameter("id"), r, out) }]),
            RoostRoute("/files/:id/url", [.post: { r, out in handlers.signURL(r.parameter("id"), r, out) }]),
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
        // No credentials: no look-up, straight to an upload worker.
        if let caller = CallerJobs.callerWithoutLookup(request) { return storeOnWorker(request, out, caller) }
        jobs.read(request, out) { _, caller in
            storeOnWorker(request, out, caller)
            return nil
        }
    }

    /// Queues `store` on an upload worker (503 when the queue is full); it answers.
    private func storeOnWorker(_ request: Request, _ out: ResponseWriter, _ caller: CallerJobs.Caller) {
        let (handlers, logger) = (self, self.logger)
        uploads.submit({
            do { try handlers.store(request, out, caller) } catch {
                out.send(ErrorResponses.response(for: error, request, logger))
            }
        }, orAnswer: out, .uploads)
    }

    /// On an upload worker: inspect, write durably, then record in the group commit.
    private func store(_ request: Request, _ out: ResponseWriter, _ caller: CallerJobs.Caller) throws {
        let scope = scope(caller)
        try scope.checkCreate()
        let upload: InspectedUpload
        do { upload = try inspector.inspect(body: request.body, contentType: request.headers["Content-Type"]) } catch {
            if error.code == .imageProcessingUnavailable { thumbnails.images.reportLoadFailure() }
            throw error
        }
        let id = ids.next()
        let type = upload.contentType
        let metadata = metadata(id, upload)
        // A create rule refuses before any byte is stored (the writer checks again at the commit).
        _ = try metadata.rowDocument(id: id, scope: scope)
        try objects.putOriginal(id, bytes: upload.bytes, contentType: type.name, keepLocalCopy: upload.isImage)
        let (thumbnails, logger, objects) = (self.thumbnails, self.logger, self.objects)
        let job = StorePools.WriteJob(operation: { writer -> Response in
            try CallerJobs.requireLiveSession(caller, writer) // inspecting and storing took a while: still signed in?
            return .json(201, try writer.insertFile(id: id, metadata: metadata, thumbnailJob: upload.isImage, scope: scope))
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

    /// `GET /files?limit=&after=`: the caller's own uploads' metadata, newest
    /// first; a full page carries `X-Roost-Next`, the `after=` of the next one.
    func ownFiles(_ request: Request, _ out: ResponseWriter) {
        var limit = 100
        if let text = request.query["limit"] {
            guard let n = Int(text), (1...1000).contains(n) else {
                return out.send(HTTPError(.invalidQuery, "limit must be a whole number from 1 to 1000; for more, follow X-Roost-Next (after=).").response)
            }
            limit = n
        }
        let (after, pageSize) = (request.query["after"], limit)
        if let after, !FileLayout.isValidID(after) {
            return out.send(HTTPError(.invalidQuery, "after must be the _id of the last file of the previous page (its X-Roost-Next).").response)
        }
        let handlers = self
        jobs.read(request, out) { reader, caller in
            switch caller.principal {
            case .anonymous: throw HTTPError(.unauthorized, "Sign in to list your files.")
            case .admin: throw HTTPError(.forbidden, "GET /files lists a user's own uploads; the admin lists every file with GET /admin/files.")
            case .user(let id):
                let documents = try reader.ownFiles(creator: id, limit: pageSize, after: after, scope: handlers.scope(caller))
                var response = Response.json(200, "[" + documents.joined(separator: ",") + "]")
                if documents.count == pageSize, let last = documents.last,
                   case .object(let o)? = try? JSONParser.parse(last), case .string(let lastID)? = o["_id"] {
                    response.headers.add("X-Roost-Next", lastID)
                }
                return response
            }
        }
    }

    /// `GET /files/:id/meta`.
    func meta(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        jobs.read(request, out, in: Self.collection, level: level) { reader, scope in
            guard let text = try reader.file(id: id, scope: scope) else { throw Self.notFound(id) }
            return Preconditions.entityResponse(200, text)
        }
    }

    /// `DELETE /files/:id`: the row goes in the group commit, then the bytes.
    func delete(_ id: String, _ request: Request, _ out: ResponseWriter) {
        guard FileLayout.isValidID(id) else { return out.send(Self.notFound(id).response) }
        let handlers = self
        jobs.write(request, out, committed: { handlers.removeBytes(id) }) { writer, caller in
            try writer.deleteFile(id: id, scope: handlers.scope(caller))
            return .json(200, "{\"count\":1}")
        }
    }

    /// Removes a deleted file's bytes, after its row's COMMIT: a crash before
    /// these unlinks leaves files the sweep removes. While a backup runs they
    /// wait (its snapshot may have been taken before this delete). Callers run
    /// after a COMMIT, on the writer's thread: with the uploads' queue full the
    /// removal still leaves that thread (an unlink, or an S3 request), never runs on it.
    func removeBytes(_ id: String) {
        let objects = self.objects
        let remove: @Sendable () -> Void = { objects.remove(id) }
        if !uploads.submit(remove) { DispatchQueue.global(qos: .utility).async(execute: remove) }
    }

    /// The caller's scope in the file store: `files_permission` and `collections.files.rules`.
    func scope(_ caller: CallerJobs.Caller) -> AccessScope {
        AccessScope(principal: caller.principal, level: level, roles: caller.roles, rules: jobs.access.rules(of: Self.collection))
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
