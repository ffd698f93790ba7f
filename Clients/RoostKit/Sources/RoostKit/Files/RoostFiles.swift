import Foundation

/// The server's file store: upload bytes with their type, download them,
/// and fetch thumbnails of images.
///
/// ```swift
/// let meta = try await roost.files.upload(png, contentType: "image/png")
/// let small = try await roost.files.thumbnail(meta.id, size: 128)
/// ```
public struct RoostFiles: Sendable {
    let client: RoostClient

    /// Uploads `data` declared as `contentType` (`POST /files`).
    ///
    /// The server detects the real type from the bytes and refuses an image
    /// type the bytes do not match (``ServerError/Code/unsupportedMediaType``)
    /// or a damaged image (``ServerError/Code/invalidImage``).
    public func upload(_ data: Data, contentType: String) async throws -> FileMeta {
        try await client.call("POST", ["files"], body: data, contentType: contentType).decode(FileMeta.self)
    }

    /// Uploads the file at `url` (a local file URL) declared as `contentType`.
    public func upload(contentsOf url: URL, contentType: String) async throws -> FileMeta {
        let data: Data
        do { data = try Data(contentsOf: url, options: .mappedIfSafe) } catch {
            throw RoostError.localStore("cannot read \(url.path): \(error)")
        }
        return try await upload(data, contentType: contentType)
    }

    /// Your own uploads, newest first (`GET /files`), `limit` (1 to 1000) at
    /// a time; pass the answer's `next` as `after` for the next page (nil: the last).
    public func mine(limit: Int = 100, after: String? = nil) async throws -> (files: [FileMeta], next: String?) {
        var query = [("limit", String(limit))]
        if let after { query.append(("after", after)) }
        let reply = try await client.call("GET", ["files"], query: query)
        return (try reply.decode([FileMeta].self), reply.header("X-Roost-Next"))
    }

    /// A file's metadata (`GET /files/:id/meta`), thumbnails' states included.
    public func meta(_ id: String) async throws -> FileMeta {
        try await client.call("GET", ["files", id, "meta"]).decode(FileMeta.self)
    }

    /// A file's bytes (`GET /files/:id`).
    public func download(_ id: String) async throws -> Data {
        try await client.call("GET", ["files", id]).data
    }

    /// A thumbnail no larger than `size` pixels on its longest side
    /// (`GET /files/:id/thumbnail?size=N`); made on demand when not ready yet.
    public func thumbnail(_ id: String, size: Int) async throws -> Data {
        try await client.call("GET", ["files", id, "thumbnail"], query: [("size", String(size))]).data
    }

    /// A thumbnail fitting a `width`×`height` box, cropped (`.cover`) or whole (`.contain`).
    public func thumbnail(_ id: String, width: Int, height: Int, fit: Fit = .contain) async throws -> Data {
        try await client.call("GET", ["files", id, "thumbnail"],
                              query: [("w", String(width)), ("h", String(height)), ("fit", fit.rawValue)]).data
    }

    /// Deletes a file, its thumbnails and metadata (creator or admin only).
    public func delete(_ id: String) async throws {
        try await client.call("DELETE", ["files", id])
    }

    /// The absolute URL of a file's bytes. It works as it is (in `AsyncImage`,
    /// a browser) only when the server's `files_permission` is `public`;
    /// otherwise the request needs the session's `Authorization` header, which
    /// `AsyncImage` cannot send: use ``localURL(of:thumbnailSize:)``.
    public func url(of id: String) -> URL { client.url(["files", id]) }

    /// The absolute URL of a thumbnail (`size` pixels on its longest side);
    /// as ``url(of:)``, usable without a header only on a public file store.
    public func thumbnailURL(of id: String, size: Int) -> URL {
        client.url(["files", id, "thumbnail"], query: [("size", String(size))])
    }

    /// How a thumbnail fills a box.
    public enum Fit: String, Sendable { case cover, contain }
}

/// A stored file's metadata.
public struct FileMeta: Codable, Sendable, Hashable, Identifiable {
    /// The file id (24 hex digits).
    public let id: String
    /// The type detected from the bytes (the declared one when the bytes are no known type).
    public let contentType: String
    /// Bytes.
    public let size: Int
    /// SHA-256 of the bytes, in hex (also the download's `ETag`).
    public let sha256: String
    /// The multipart file name, when there was one.
    public let name: String?
    /// Image width in pixels.
    public let width: Int?
    /// Image height in pixels.
    public let height: Int?
    /// The path of the bytes, `/files/:id`.
    public let url: String
    /// Thumbnails by size (`"128"`, `"512"`), for images.
    public let thumbnails: [String: Thumbnail]?

    enum CodingKeys: String, CodingKey { case id = "_id", contentType, size, sha256, name, width, height, url, thumbnails }

    /// One thumbnail's state: `pending`, then `ready` (or `failed`, with `error`).
    public struct Thumbnail: Codable, Sendable, Hashable {
        public let state: String
        public let contentType: String?
        public let width: Int?
        public let height: Int?
        public let size: Int?
        public let url: String?
        public let error: String?
    }
}
