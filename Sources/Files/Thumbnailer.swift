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

/// Makes thumbnails from stored files with libvips and writes them durably
/// next to their source. Runs on thumbnail pool threads only.
public struct Thumbnailer: Sendable {
    public let layout: FileLayout
    public let quality: Int
    /// fsync thumbnails too (durability `power`). Otherwise the atomic rename
    /// alone protects them: a thumbnail can always be made again.
    public let syncWrites: Bool

    public init(layout: FileLayout, quality: Int = 80, syncWrites: Bool = false) {
        self.layout = layout
        self.quality = quality
        self.syncWrites = syncWrites
    }

    /// The thumbnail file of `spec` for file `id` of type `type`.
    public func path(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec) -> String {
        layout.thumbPath(id, variant: spec.name + "." + MediaType.fileExtension(type.thumbnailFormat))
    }

    /// The stored thumbnail of `spec`, when one is already on disk (made on
    /// demand, or by a job that a crash cut short before its commit) and
    /// readable; nil otherwise. Thumbnails derive from immutable originals,
    /// so a whole one never needs making again.
    public func existing(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec) -> ThumbnailInfo? {
        guard let bytes = try? DurableFile.read(path(id, type, spec), limit: 64 << 20), !bytes.isEmpty,
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
        let dir = layout.thumbDirectory(id)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return 0 }
        var oneOff: [(name: String, made: Date)] = []
        for name in names where !kept.contains(String(name.split(separator: ".").first ?? "")) {
            let made = (try? FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.modificationDate] as? Date) ?? .distantPast
            oneOff.append((name, made))
        }
        guard oneOff.count > limit else { return 0 }
        let doomed = oneOff.sorted { $0.made < $1.made }.prefix(oneOff.count - limit)
        for victim in doomed { try? FileManager.default.removeItem(atPath: dir + "/" + victim.name) }
        return doomed.count
    }

    /// Makes (or remakes) the thumbnail and stores it.
    public func make(_ id: String, _ type: MediaType, _ spec: ThumbnailSpec) throws -> ThumbnailInfo {
        let format = type.thumbnailFormat
        let encoded = try Vips.thumbnail(path: layout.objectPath(id), width: spec.width, height: spec.height,
                                         crop: spec.crop, format: format, quality: quality)
        try DurableFile.write(encoded.bytes, to: path(id, type, spec), tmpDir: layout.tmp, sync: syncWrites)
        return ThumbnailInfo(spec: spec, contentType: MediaType.of(format), width: encoded.width, height: encoded.height,
                             size: encoded.bytes.count, bytes: encoded.bytes)
    }
}
