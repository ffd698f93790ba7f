import CFileShim
import Foundation
import HTTP
import Logging

/// Files in an S3-compatible bucket (see `S3Keys` for the layout). Bytes are
/// served through the worker that checked access: the object (or the asked
/// range) is fetched into an unlinked temporary file and sent like a local
/// file. Images keep a local copy (`files/staging/<id>`) until their
/// thumbnail job is done, so thumbnails need no download.
public struct S3ObjectStore: ObjectStore {
    public let client: S3Client
    public let keys: S3Keys
    /// Local directories: `tmp` for downloads, `staging` for thumbnail inputs.
    let layout: FileLayout
    let logger: Logger
    public init(settings: S3Settings, layout: FileLayout, logger: Logger) {
        client = S3Client(settings: settings)
        keys = S3Keys(prefix: settings.prefix)
        self.layout = layout
        self.logger = logger
    }

    public var kind: String { "s3" }
    public var isLocal: Bool { false }

    var staging: String { layout.root + "/staging" }

    /// Creates the local directories (the sweep, which also does, may wait for a running backup).
    public func prepare() throws {
        try layout.prepare()
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
    }
    func stagingPath(_ id: String) -> String { staging + "/" + id }

    /// S3 failures become 503s; the details go to the log, not to the client.
    func guarded<T>(_ what: String, _ id: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as S3Error {
            logger.warning("object store request failed", metadata: ["file": "\(id)", "operation": "\(what)", "error": "\(error)"])
            throw ObjectStoreUnavailable(error.description)
        }
    }

    public func putOriginal(_ id: String, bytes: [UInt8], contentType: String, keepLocalCopy: Bool) throws {
        if keepLocalCopy { try? DurableFile.write(bytes, to: stagingPath(id), tmpDir: layout.tmp, sync: false) }
        do {
            try guarded("put", id) { try client.put(keys.original(id), bytes, contentType: contentType) }
        } catch {
            release(id)
            throw error
        }
    }

    public func openOriginal(_ id: String, offset: Int, length: Int?, limit: Int) throws -> FileSegment? {
        if let length, length > limit { throw DurableFile.Failure(description: "file \(id) range is larger than \(limit) bytes") }
        let fd = try temporaryDescriptor()
        var owned = true
        defer { if owned { close(fd) } }
        let range = offset == 0 && length == nil ? nil : "bytes=\(offset)-" + (length.map { "\(offset + max(0, $0 - 1))" } ?? "")
        if length == 0 { return .bytes([]) }
        guard let count = try guarded("get", id, { try client.get(keys.original(id), range: range, into: fd) }) else { return nil }
        // A store that ignored the Range (or an object shorter than its row) must not send wrong bytes.
        if let length, count != length {
            throw ObjectStoreUnavailable("file \(id): asked the bucket for \(length) bytes at \(offset), got \(count)")
        }
        if count <= FileSegment.smallRead { return .bytes(try DurableFile.readRange(fd, "file \(id)", offset: 0, count: count)) }
        owned = false
        return .cached(FileBody(descriptor: fd, offset: 0, length: count))
    }

    /// An unnamed file in `files/tmp` (O_TMPFILE), or a named one unlinked at once.
    func temporaryDescriptor() throws -> Int32 {
        let fd = roost_open_scratch(layout.tmp, 0o600)
        if fd >= 0 { return fd }
        let path = layout.tmp + "/" + UUID().uuidString
        let named = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard named >= 0 else { throw DurableFile.fail("cannot create", path) }
        unlink(path)
        return named
    }

    public func withLocalOriginal<T>(_ id: String, _ body: (String) throws -> T) throws -> T {
        let path = layout.tmp + "/" + UUID().uuidString
        defer { unlink(path) }
        // A name of our own for the staged copy: `release` may unlink the
        // staged name meanwhile (its last thumbnail job done) while this one reads it.
        if link(stagingPath(id), path) == 0 { return try body(path) }
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DurableFile.fail("cannot create", path) }
        let found = try { defer { close(fd) }; return try guarded("get", id) { try client.get(keys.original(id), into: fd) } }()
        guard found != nil else { throw DurableFile.Failure(description: "the original of file \(id) is not in the bucket") }
        return try body(path)
    }

    public func release(_ id: String) { unlink(stagingPath(id)) }

    public func discardUncommitted(_ id: String) {
        release(id)
        do { try client.delete(keys.original(id)) } catch {
            logger.warning("uncommitted object not removed; the sweep will", metadata: ["file": "\(id)", "error": "\(error)"])
        }
    }

    public func remove(_ id: String) {
        release(id)
        do {
            for object in try client.list(prefix: keys.file(id)) { try client.delete(object.key) }
        } catch {
            logger.warning("deleted file's objects not removed; the sweep will", metadata: ["file": "\(id)", "error": "\(error)"])
        }
    }

    public func putThumbnail(_ id: String, name: String, bytes: [UInt8], sync: Bool) throws {
        try guarded("put thumbnail", id) { try client.put(keys.thumbnail(id, name: name), bytes, contentType: "application/octet-stream") }
    }

    public func openThumbnail(_ id: String, name: String, limit: Int) throws -> StoredObject? {
        guard let bytes = try readThumbnail(id, name: name, limit: limit) else { return nil }
        return StoredObject(size: bytes.count) { offset, length in
            .bytes(Array(bytes[offset..<min(bytes.count, offset + (length ?? bytes.count))]))
        }
    }

    public func readThumbnail(_ id: String, name: String, limit: Int) throws -> [UInt8]? {
        try guarded("get thumbnail", id) { try client.bytes(keys.thumbnail(id, name: name)) }
    }

    public func thumbnails(_ id: String) throws -> [(name: String, made: Date)] {
        let prefix = keys.thumbnails(id)
        return try guarded("list thumbnails", id) { try client.list(prefix: prefix) }.map { (String($0.key.dropFirst(prefix.count)), $0.modified) }
    }

    public func removeThumbnail(_ id: String, name: String) { try? client.delete(keys.thumbnail(id, name: name)) }

    public func removeThumbnails(_ id: String) {
        for object in (try? client.list(prefix: keys.thumbnails(id))) ?? [] { try? client.delete(object.key) }
    }
}
