/// A file's media type as Roost sees it: detected from the bytes (magic
/// numbers), never taken on trust from the client.
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) {
        let lower = name.lowercased()
        do {
            switch lower {
            case "image/jpg", "image/pjpeg": self.name = "image/jpeg"
            case "image/x-png": self.name = "image/png"
            default: self.name = lower
            }
        }
    }

    public var description: String { name }

    public static let png = MediaType("image/png")
    public static let jpeg = MediaType("image/jpeg")
    public static let gif = MediaType("image/gif")
    public static let webp = MediaType("image/webp")
    public static let octetStream = MediaType("application/octet-stream")

    /// Image types Roost decodes, measures and thumbnails.
    public var isRasterImage: Bool { Self.rasterImages.contains(self) }
    static let rasterImages: Set<MediaType> = [.png, .jpeg, .gif, .webp]

    /// Types `sniff` recognises among images; a declared one must match the bytes.
    static let sniffable: Set<MediaType> = rasterImages.union([MediaType("image/avif"), MediaType("image/heic")])

    /// True for the client-declared `image/*` family (including ones Roost
    /// does not decode, such as `image/svg+xml`).
    public var isImageFamily: Bool { name.hasPrefix("image/") }

    /// Types a browser may render inline from this origin without running
    /// script: plain raster images. SVG, HTML, XML, PDF and everything else
    /// are served as attachments.
    public var isSafeInline: Bool { isRasterImage }

    /// The thumbnail encoding: JPEG stays JPEG; PNG, WebP and GIF become WebP.
    public var thumbnailFormat: Vips.Format { self == .jpeg ? .jpeg : .webp }

    /// The media type of a thumbnail format.
    public static func of(_ format: Vips.Format) -> MediaType {
        switch format {
        case .jpeg: return .jpeg
        case .webp: return .webp
        case .png: return .png
        case .gif: return .gif
        }
    }

    /// File extension for a thumbnail format.
    public static func fileExtension(_ format: Vips.Format) -> String {
        switch format {
        case .jpeg: return "jpg"
        case .webp: return "webp"
        case .png: return "png"
        case .gif: return "gif"
        }
    }

    /// The type the bytes themselves announce, or nil when unknown.
    public static func sniff(_ bytes: [UInt8]) -> MediaType? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("%PDF-".utf8)) { return MediaType("application/pdf") }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return MediaType("application/zip") }
        if starts([0x1F, 0x8B]) { return MediaType("application/gzip") }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            if brand == "avif" || brand == "avis" { return MediaType("image/avif") }
            if brand.hasPrefix("hei") || brand == "mif1" { return MediaType("image/heic") }
            return MediaType("video/mp4")
        }
        return nil
    }

    /// Parses a `Content-Type` header value into a media type, or nil when
    /// it is absent or not of the form `type/subtype`.
    public static func declared(_ header: String?) -> MediaType? {
        guard let header, let main = header.split(separator: ";").first else { return nil }
        let trimmed = main.trimmingCharacters(in: " \t")
        let parts = trimmed.split(separator: "/")
        guard parts.count == 2, trimmed.utf8.count <= 127,
              trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }) else { return nil }
        return MediaType(trimmed)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
