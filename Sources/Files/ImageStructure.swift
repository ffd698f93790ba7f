import Foundation

/// A structural check of an image container: walks the format's markers,
/// chunks or blocks without decoding pixels, so truncated or mangled files
/// are refused cheaply on the upload path.
///
/// Strict, but in line with what libjpeg(-turbo), libpng, giflib/cgif and
/// libwebp write and accept: bytes after a JPEG's EOI, a GIF's trailer or a
/// WebP's RIFF chunk are allowed (cameras and tools append data); bytes after
/// a PNG's IEND are not.
public enum ImageStructure {
    /// Why the bytes are not a well-formed image of the type.
    public struct Failure: Error, Sendable, CustomStringConvertible, Equatable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Checks `bytes` as an image of `type` (.jpeg, .png, .gif, .webp) and returns its dimensions.
    /// Throws for truncated data, bad lengths, bad checksums, missing required parts, zero dimensions.
    public static func check(_ bytes: [UInt8], _ type: MediaType) throws(Failure) -> (width: Int, height: Int) {
        try bytes.withUnsafeBufferPointer { (b: Bytes) throws(Failure) -> (width: Int, height: Int) in
            switch type {
            case .jpeg: return try jpeg(b)
            case .png: return try png(b)
            case .gif: return try gif(b)
            case .webp: return try webp(b)
            default: throw Failure("\(type) has no structural check")
            }
        }
    }

    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// `0xAB`, for messages.
    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (byte < 0x10 ? "0" : "") + digits
    }
}

/// Big- and little-endian integers at an offset, for the format walkers.
extension UnsafeBufferPointer<UInt8> {
    func be16(_ i: Int) -> Int { Int(self[i]) << 8 | Int(self[i + 1]) }
    func be32(_ i: Int) -> Int { Int(self[i]) << 24 | Int(self[i + 1]) << 16 | Int(self[i + 2]) << 8 | Int(self[i + 3]) }
    func le16(_ i: Int) -> Int { Int(self[i]) | Int(self[i + 1]) << 8 }
    func le24(_ i: Int) -> Int { Int(self[i]) | Int(self[i + 1]) << 8 | Int(self[i + 2]) << 16 }
    func le32(_ i: Int) -> Int { le24(i) | Int(self[i + 3]) << 24 }
}
