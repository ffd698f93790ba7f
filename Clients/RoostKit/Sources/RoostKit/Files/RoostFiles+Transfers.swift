import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Transfers with progress, and local copies for image views.
extension RoostFiles {
    /// Uploads `data` now, reporting bytes sent (`POST /files`). To upload
    /// whether or not the device is online, queue it in a ``FileUploadQueue``.
    public func upload(_ data: Data, contentType: String,
                       progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> FileMeta {
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("roostkit-upload-\(UUID().uuidString)")
        do { try data.write(to: spool) } catch { throw RoostError.localStore("cannot spool the upload: \(error)") }
        defer { try? FileManager.default.removeItem(at: spool) }
        return try await upload(contentsOf: spool, contentType: contentType, progress: progress)
    }

    /// Uploads the file at `url` now, streamed from disk, reporting bytes sent.
    public func upload(contentsOf url: URL, contentType: String,
                       progress: @escaping @Sendable (TransferProgress) -> Void) async throws -> FileMeta {
        let request = client.request("POST", ["files"], body: Data(), contentType: contentType)
        let (data, response): (Data, HTTPURLResponse)
        do { (data, response) = try await client.transport.upload(request, fromFile: url, progress: progress) } catch {
            throw RoostError.from(transport: error)
        }
        return try client.check(request, data, response).decode(FileMeta.self)
    }

    /// Downloads a file's bytes to `destination` (replaced), reporting bytes
    /// received; the file is written as it arrives, never held in memory whole.
    public func download(_ id: String, to destination: URL,
                         progress: @escaping @Sendable (TransferProgress) -> Void = { _ in }) async throws {
        try await fetch(client.request("GET", ["files", id]), to: destination, progress: progress)
    }

    /// A local `file://` URL of a file's bytes, or of its thumbnail of
    /// `thumbnailSize` pixels, downloaded once into `directory` (the caches
    /// directory by default) and served from there afterwards: file ids never
    /// name other bytes. `AsyncImage` loads it like any URL, and no header is
    /// needed, whatever the server's `files_permission`.
    ///
    /// ```swift
    /// AsyncImage(url: try? await roost.files.localURL(of: place.imageId, thumbnailSize: 512)) { $0.resizable() } placeholder: { ProgressView() }
    /// ```
    public func localURL(of id: String, thumbnailSize: Int? = nil, in directory: URL? = nil) async throws -> URL {
        let folder = directory ?? Self.defaultCache
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw RoostError.localStore("cannot make \(folder.path): \(error)")
        }
        let name = Self.cacheName(of: id, thumbnailSize: thumbnailSize)
        let target = folder.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: target.path) { return target }
        let partial = folder.appendingPathComponent(name + ".part-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: partial) }
        let request = thumbnailSize.map { client.request("GET", ["files", id, "thumbnail"], query: [("size", String($0))]) }
            ?? client.request("GET", ["files", id])
        try await fetch(request, to: partial, progress: { _ in })
        // Another task may have cached it meanwhile: either copy is the same bytes.
        if !FileManager.default.fileExists(atPath: target.path) {
            do { try FileManager.default.moveItem(at: partial, to: target) } catch {
                if !FileManager.default.fileExists(atPath: target.path) { throw RoostError.localStore("cannot cache \(id): \(error)") }
            }
        }
        return target
    }

    /// The name of a file's (or thumbnail's) copy in a cache folder, shared
    /// by ``localURL(of:thumbnailSize:in:)`` and ``FileDownloadQueue``.
    static func cacheName(of id: String, thumbnailSize: Int?) -> String {
        let safe = id.filter { $0.isLetter || $0.isNumber }
        return thumbnailSize.map { "\(safe)-\($0)" } ?? safe
    }

    /// RoostKit's folder in the caches directory.
    static var defaultCache: URL {
        (FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("RoostKit/files", isDirectory: true)
    }

    private func fetch(_ request: URLRequest, to destination: URL,
                       progress: @escaping @Sendable (TransferProgress) -> Void) async throws {
        let (data, response): (Data, HTTPURLResponse)
        do { (data, response) = try await client.transport.download(request, to: destination, progress: progress) } catch {
            throw RoostError.from(transport: error)
        }
        _ = try client.check(request, data, response)
    }
}

extension RoostClient {
    /// The checks ``call(_:_:query:headers:body:contentType:)`` makes, for an
    /// answer got another way (an upload or download task).
    func check(_ request: URLRequest, _ data: Data, _ response: HTTPURLResponse) throws -> Reply {
        let reply = Reply(data: data, response: response)
        if reply.status == 401 { noteUnauthorized(request, response, data) }
        guard reply.status < 400 else { throw RoostError.server(ServerError(response: response, body: data)) }
        return reply
    }
}
