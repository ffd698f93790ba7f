import Foundation
import HTTP

/// Where file bytes live, below the file handlers: the local file store
/// (`LocalObjectStore`, the default) or an S3-compatible bucket
/// (`S3ObjectStore`). Ids are server-made; every call runs on a worker
/// thread. Calls that cannot reach the store throw `ObjectStoreUnavailable`.
public protocol ObjectStore: Sendable {
    /// `local` or `s3`, for logs and metrics.
    var kind: String { get }

    /// True when bytes come from the local disk (served on the reader that
    /// checked access); false for network stores (fetched on the upload pool).
    var isLocal: Bool { get }

    /// Stores an upload's original; returns once the store holds the bytes
    /// durably (fsync, or the bucket's acknowledgement). `keepLocalCopy`
    /// (images) keeps a local copy for the thumbnail jobs until `release`.
    func putOriginal(_ id: String, bytes: [UInt8], contentType: String, keepLocalCopy: Bool) throws

    /// `length` bytes of the original from `offset` (to its end when nil), for sending; nil when absent.
    func openOriginal(_ id: String, offset: Int, length: Int?, limit: Int) throws -> FileSegment?

    /// Runs `body` with the path of a local file holding the original (the thumbnail input).
    func withLocalOriginal<T>(_ id: String, _ body: (String) throws -> T) throws -> T

    /// The local copy kept for thumbnails is no longer needed.
    func release(_ id: String)

    /// Removes an original whose row never committed.
    func discardUncommitted(_ id: String)

    /// Removes everything stored for a deleted file (original and thumbnails).
    func remove(_ id: String)

    /// Stores thumbnail `name` (e.g. `128.webp`) beside its original.
    func putThumbnail(_ id: String, name: String, bytes: [UInt8], sync: Bool) throws

    /// A stored thumbnail's size and a reader of its ranges; nil when absent.
    func openThumbnail(_ id: String, name: String, limit: Int) throws -> StoredObject?

    /// A stored thumbnail's bytes; nil when absent.
    func readThumbnail(_ id: String, name: String, limit: Int) throws -> [UInt8]?

    /// The thumbnails stored for `id`, with when each was made.
    func thumbnails(_ id: String) throws -> [(name: String, made: Date)]

    func removeThumbnail(_ id: String, name: String)

    /// Removes every thumbnail of `id` (its row is gone).
    func removeThumbnails(_ id: String)

    /// The start-up sweep against the ids that have rows.
    func sweep(rows: Set<String>) throws -> FileSweeper.Outcome
}

/// A stored object opened for serving: its size, and ranges on demand.
public struct StoredObject {
    public let size: Int
    public let read: (_ offset: Int, _ length: Int?) throws -> FileSegment

    public init(size: Int, read: @escaping (Int, Int?) throws -> FileSegment) {
        self.size = size
        self.read = read
    }
}

/// The object store did not answer (or refused us): the request changed
/// nothing and may be tried again. 503 with `Retry-After`, never a 500.
public struct ObjectStoreUnavailable: Error, HTTPErrorConvertible, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }

    public var httpError: HTTPError {
        HTTPError(.storageUnavailable, "The file store is not answering; nothing was changed. Try again shortly.",
                  headers: Headers([("Retry-After", "5")]))
    }
}
