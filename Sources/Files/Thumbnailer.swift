import Foundation

/// One thumbnail variant: a box and whether to fill it (crop) or fit in it.
public struct ThumbnailSpec: Sendable, Hashable {
    public let width: Int
    public let height: Int
    public let crop: Bool

    /// The largest box edge Roost makes.
    public static let maxEdge = 4096

    /// A thumbnail whose longest side is `size`.
    public static func longest(_ size: Int) -> ThumbnailSpec { ThumbnailSpec(width: size, height: size, crop: false) }

    public init(width: Int, height: Int, crop: Bool) {
        self.width = width
        self.height = height
        self.crop = crop
    }

    /// The variant's file name stem: `128` for a longest side, else `w200-h100-cover`.
    public var name: String {
        if width == height && !crop { return "\(width)" }
        return "w\(width)-h\(height)-\(crop ? "cover" : "contain")"
    }
}

/// What a finished thumbnail looks like.
public struct ThumbnailInfo: Sendable {
    public let spec: ThumbnailSpec
    public let contentType: MediaType
    public let width: Int
    public let height: Int
    public let size: Int
    /// The encoded bytes, when they were just made.
    public let bytes: [UInt8]
}

/// Makes thumbnails from stored files with libvips and stores them beside
/// their source in the object store. Runs on thumbnail pool threads only.
public struct Thumbnailer: Sendable {
    public let store: any ObjectStore
    public let quality: Int
    /// fsync thumbnails too (durability `power`). Otherwise the atomic rename
    /// alone protects them: a thumbnail can always be made again.
    public let syncWrites: Bool

    public init(store: any ObjectStore, quality: Int = 80, syncWrites: Bool = false) {
        self.store = store
        self.quality = quality
        self.syncWrites = syncWrites
    }

    /// The stored name of `spec`'s thumbnail for a file of type `type`, e.g. `128.webp`.
    public func name(_ type: MediaType, _ spec: ThumbnailSpec) -> String {
        spec.name + "." + MediaType.fileExtension(type.thumbnailFormat)
    }

    /// The stored thumbnail of `spec`, when one is already stored (made on
    /// demand, or by a job that a crash cut short before its commit) and
    /// readable; nil otherwise. Thumbnails derive from immutable originals,
    /// so a whole one never needs making again.
    public func existing(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec) -> ThumbnailInfo? {
        guard let bytes = try? store.readThumbnail(id, name: name(type, spec), limit: 64 << 20), !bytes.isEmpty,
              let header = try? Vips.probe(bytes) else { return nil }
        return ThumbnailInfo(spec: spec, contentType: MediaType.of(type.thumbnailFormat), width: header.width,
                             height: header.height, size: bytes.count, bytes: bytes)
    }

    /// Removes the oldest one-off variants of file `id` (those not named in
    /// `kept`, the configured sizes) until at most `limit` remain, so what
    /// clients may store per file is bounded whatever `w`/`h`/`fit` they ask.
    /// - Returns: how many variants were removed.
    @discardableResult
    public func evictOneOffVariants(_ id: String, limit: Int, kept: Set<String>) -> Int {
        guard let stored = try? store.thumbnails(id) else { return 0 }
        let oneOff = stored.filter { !kept.contains(String($0.name.split(separator: ".").first ?? "")) }
        guard oneOff.count > limit else { return 0 }
        let doomed = oneOff.sorted { $0.made < $1.made }.prefix(oneOff.count - limit)
        for victim in doomed { store.removeThumbnail(id, name: victim.name) }
        return doomed.count
    }

    /// Makes (or remakes) the thumbnail and stores it.
    public func make(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec) throws -> ThumbnailInfo {
        let format = type.thumbnailFormat
        let encoded = try store.withLocalOriginal(id) { path in
            try Vips.thumbnail(path: path, width: spec.width, height: spec.height, crop: spec.crop, format: format, quality: quality)
        }
        try store.putThumbnail(id, name: name(type, spec), bytes: encoded.bytes, sync: syncWrites)
        return ThumbnailInfo(spec: spec, contentType: MediaType.of(format), width: encoded.width, height: encoded.height,
                             size: encoded.bytes.count, bytes: encoded.bytes)
    }
}
