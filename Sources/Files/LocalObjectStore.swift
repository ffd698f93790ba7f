import Foundation
import HTTP
import Logging

/// Files on the local file system under the data directory (see
/// `FileLayout`): durable writes (fsync, link or rename into place) and
/// descriptors served with `sendfile` when cached.
public struct LocalObjectStore: ObjectStore {
    public let layout: FileLayout
    let logger: Logger
    /// Removes a deleted file's paths (the daemon defers this while a backup runs).
    let removePaths: @Sendable ([String]) -> Void

    public init(layout: FileLayout, logger: Logger,
                removePaths: @escaping @Sendable ([String]) -> Void = { paths in
                    for path in paths { try? FileManager.default.removeItem(atPath: path) }
                }) {
        self.layout = layout
        self.logger = logger
        self.removePaths = removePaths
    }

    public var kind: String { "local" }
    public var isLocal: Bool { true }

    public func putOriginal(_ id: String, bytes: [UInt8], contentType: String, keepLocalCopy: Bool) throws {
        try DurableFile.write(bytes, to: layout.objectPath(id), tmpDir: layout.tmp)
    }

    public func openOriginal(_ id: String, offset: Int, length: Int?, limit: Int) throws -> FileSegment? {
        try FileSegment.open(layout.objectPath(id), offset: offset, length: length, limit: limit)
    }

    public func withLocalOriginal<T>(_ id: String, _ body: (String) throws -> T) throws -> T {
        try body(layout.objectPath(id))
    }

    public func release(_ id: String) {}

    public func discardUncommitted(_ id: String) { unlink(layout.objectPath(id)) }

    public func remove(_ id: String) { removePaths([layout.objectPath(id), layout.thumbDirectory(id)]) }

    public func putThumbnail(_ id: String, name: String, bytes: [UInt8], sync: Bool) throws {
        try DurableFile.write(bytes, to: layout.thumbPath(id, variant: name), tmpDir: layout.tmp, sync: sync)
    }

    public func openThumbnail(_ id: String, name: String, limit: Int) throws -> StoredObject? {
        let path = layout.thumbPath(id, variant: name)
        guard let size = DurableFile.size(path) else { return nil }
        return StoredObject(size: size) { offset, length in
            guard let segment = try FileSegment.open(path, offset: offset, length: length, limit: limit) else {
                throw HTTPError.notFound("No file with _id \"\(id)\".")
            }
            return segment
        }
    }

    public func readThumbnail(_ id: String, name: String, limit: Int) throws -> [UInt8]? {
        try DurableFile.read(layout.thumbPath(id, variant: name), limit: limit)
    }

    public func thumbnails(_ id: String) throws -> [(name: String, made: Date)] {
        let dir = layout.thumbDirectory(id)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        return names.map { name in
            (name, (try? FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.modificationDate] as? Date) ?? .distantPast)
        }
    }

    public func removeThumbnail(_ id: String, name: String) {
        try? FileManager.default.removeItem(atPath: layout.thumbPath(id, variant: name))
    }

    public func removeThumbnails(_ id: String) { try? FileManager.default.removeItem(atPath: layout.thumbDirectory(id)) }

    public func sweep(rows: Set<String>) throws -> FileSweeper.Outcome {
        try FileSweeper(layout: layout, logger: logger).sweep(rows: rows)
    }
}
