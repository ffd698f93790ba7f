import CZlib
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

    // MARK: JPEG

    /// SOI, marker segments, a frame header, scans with their entropy-coded
    /// data, EOI. Progressive files interleave many scans with tables.
    static func jpeg(_ b: Bytes) throws(Failure) -> (width: Int, height: Int) {
        let n = b.count
        guard n >= 2, b[0] == 0xFF, b[1] == 0xD8 else { throw Failure("JPEG: no SOI marker") }
        var size: (width: Int, height: Int)?
        var sof: UInt8 = 0
        var components: [(id: UInt8, table: UInt8)] = []
        var quantTables: UInt8 = 0  // one bit per DQT destination 0–3
        var scans = 0
        var i = 2
        while true {
            guard i < n else { throw Failure("JPEG: truncated before EOI") }
            // libjpeg only warns about a few extraneous bytes before a marker
            // (some cameras write them); more than that is not a JPEG.
            var junk = 0
            while i < n && b[i] != 0xFF && junk < 16 { i += 1; junk += 1 }
            guard i < n else { throw Failure("JPEG: truncated before EOI") }
            guard b[i] == 0xFF else { throw Failure("JPEG: expected a marker at offset \(i)") }
            while i < n && b[i] == 0xFF { i += 1 }  // fill bytes
            guard i < n else { throw Failure("JPEG: truncated before EOI") }
            let marker = b[i]
            i += 1
            switch marker {
            case 0xD9:
                guard let size else { throw Failure("JPEG: EOI before a frame header") }
                guard scans > 0 else { throw Failure("JPEG: EOI before any scan") }
                return size
            case 0x01:
                continue  // TEM, no length
            case 0x00, 0x02...0xBF, 0xD0...0xD8:
                throw Failure("JPEG: unexpected marker \(hex(marker)) at offset \(i - 1)")
            default:
                break
            }
            guard i + 2 <= n else { throw Failure("JPEG: truncated marker segment") }
            let length = b.be16(i)
            guard length >= 2 else { throw Failure("JPEG: bad length \(length) for marker \(hex(marker))") }
            guard length <= n - i else { throw Failure("JPEG: marker \(hex(marker)) segment runs past the end") }
            let start = i + 2, end = i + length  // the payload, after the length
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard size == nil else { throw Failure("JPEG: a second frame header") }
                guard length >= 8 else { throw Failure("JPEG: frame header too short") }
                let precision = b[start], lossless = marker & 0x03 == 0x03
                guard lossless ? (2...16).contains(precision) : (precision == 8 || precision == 12) else {
                    throw Failure("JPEG: bad sample precision \(precision)")
                }
                let height = b.be16(start + 1), width = b.be16(start + 3), count = Int(b[start + 5])
                guard width > 0, height > 0 else { throw Failure("JPEG: zero dimension \(width)x\(height)") }
                guard (1...4).contains(count) else { throw Failure("JPEG: \(count) components") }
                guard length == 8 + 3 * count else { throw Failure("JPEG: frame header length \(length) for \(count) components") }
                for c in 0..<count {
                    let p = start + 6 + 3 * c, h = b[p + 1] >> 4, v = b[p + 1] & 0x0F, table = b[p + 2]
                    guard (1...4).contains(h), (1...4).contains(v) else { throw Failure("JPEG: bad sampling factors") }
                    guard table <= 3 else { throw Failure("JPEG: bad quantisation table \(table)") }
                    components.append((b[p], table))
                }
                size = (width, height)
                sof = marker
            case 0xC4:  // DHT: class/destination, 16 counts, the symbols; repeated
                var p = start
                while p < end {
                    guard b[p] >> 4 <= 1, b[p] & 0x0F <= 3 else { throw Failure("JPEG: bad Huffman table class or destination") }
                    guard end - p >= 17 else { throw Failure("JPEG: Huffman table runs past its segment") }
                    var symbols = 0
                    for k in 1...16 { symbols += Int(b[p + k]) }
                    guard symbols <= 256, end - p - 17 >= symbols else { throw Failure("JPEG: bad Huffman table length") }
                    p += 17 + symbols
                }
            case 0xDB:  // DQT: precision/destination, 64 entries of 1 or 2 bytes; repeated
                var p = start
                while p < end {
                    let precision = b[p] >> 4, table = b[p] & 0x0F
                    guard precision <= 1, table <= 3 else { throw Failure("JPEG: bad quantisation table header") }
                    guard end - p >= 1 + 64 * Int(precision + 1) else { throw Failure("JPEG: quantisation table runs past its segment") }
                    quantTables |= 1 << table
                    p += 1 + 64 * Int(precision + 1)
                }
            case 0xDD:
                guard length == 4 else { throw Failure("JPEG: bad restart interval length \(length)") }
            case 0xDA:
                guard size != nil else { throw Failure("JPEG: scan before a frame header") }
                guard length >= 3 else { throw Failure("JPEG: scan header too short") }
                let count = Int(b[start])
                guard count >= 1, count <= components.count, length == 6 + 2 * count else {
                    throw Failure("JPEG: scan header length \(length) for \(count) components")
                }
                for c in 0..<count {
                    let p = start + 1 + 2 * c
                    guard let component = components.first(where: { $0.id == b[p] }) else { throw Failure("JPEG: scan names an unknown component") }
                    guard b[p + 1] >> 4 <= 3, b[p + 1] & 0x0F <= 3 else { throw Failure("JPEG: bad entropy table selector") }
                    guard sof & 0x03 == 0x03 || quantTables & (1 << component.table) != 0 else {
                        throw Failure("JPEG: quantisation table \(component.table) not defined")
                    }
                }
                let ss = b[end - 3], se = b[end - 2], ah = b[end - 1] >> 4, al = b[end - 1] & 0x0F
                if sof & 0x07 == 0x02 || sof & 0x07 == 0x06 {  // progressive: SOF2, SOF6, SOF10, SOF14
                    guard ss == 0 ? se == 0 : (ss <= se && se <= 63 && count == 1),
                          ah == 0 || al == ah - 1, al <= 13 else { throw Failure("JPEG: bad progressive scan parameters") }
                }
                scans += 1
                i = try entropyCoded(b, from: end)
                continue
            default:
                break  // APPn, COM, DNL, ...: the length is all there is to check
            }
            i = end
        }
    }

    /// Skips entropy-coded data from `offset`: a 0xFF is stuffing (FF 00), a
    /// restart marker (FF D0–D7), or a marker that ends the scan. Returns the
    /// offset of that marker's 0xFF.
    static func entropyCoded(_ b: Bytes, from offset: Int) throws(Failure) -> Int {
        guard let base = b.baseAddress else { throw Failure("JPEG: truncated scan") }
        let n = b.count
        var p = offset
        while p < n {
            guard let hit = memchr(base + p, 0xFF, n - p) else { break }
            let ff = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
            var j = ff + 1
            while j < n && b[j] == 0xFF { j += 1 }  // fill bytes before a marker
            guard j < n else { break }
            switch b[j] {
            case 0x00 where j == ff + 1, 0xD0...0xD7:
                p = j + 1
            case 0xC0...0xFE:
                return j - 1
            default:
                throw Failure("JPEG: bad byte \(hex(b[j])) after 0xFF in entropy-coded data at offset \(j)")
            }
        }
        throw Failure("JPEG: truncated scan (no EOI)")
    }

    // MARK: PNG

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let IHDR: UInt32 = 0x4948_4452, PLTE: UInt32 = 0x504C_5445, IDAT: UInt32 = 0x4944_4154, IEND: UInt32 = 0x4945_4E44

    /// CRC-32 (zlib) of `count` bytes at `offset`.
    static func crc(_ b: Bytes, _ offset: Int, _ count: Int) -> UInt32 {
        guard let base = b.baseAddress else { return UInt32(crc32(0, nil, 0)) }
        return UInt32(crc32(0, base + offset, UInt32(count)))
    }

    /// The signature, then length-type-data-CRC chunks: IHDR first, PLTE
    /// (when required) before consecutive IDATs, IEND last.
    static func png(_ b: Bytes) throws(Failure) -> (width: Int, height: Int) {
        let n = b.count
        guard n >= 8, pngSignature.indices.allSatisfy({ b[$0] == pngSignature[$0] }) else { throw Failure("PNG: bad signature") }
        var size: (width: Int, height: Int)?
        var colourType: UInt8 = 0
        var palette = false
        var idat = 0  // 0 none yet, 1 in the run, 2 after the run
        var zlibHeader: [UInt8] = []
        var idatBytes = 0
        var bitsPerPixel = 0
        var i = 8
        while true {
            guard n - i >= 12 else { throw Failure("PNG: truncated before IEND") }
            let length = b.be32(i), type = UInt32(b.be32(i + 4)), data = i + 8
            guard length <= 0x7FFF_FFFF else { throw Failure("PNG: chunk length \(length) too large") }
            guard length <= n - i - 12 else { throw Failure("PNG: chunk at offset \(i) runs past the end") }
            guard (4..<8).allSatisfy({ (0x61...0x7A).contains(b[i + $0] | 0x20) }) else {
                throw Failure("PNG: bad chunk type at offset \(i)")
            }
            let name = { String(decoding: UnsafeBufferPointer(rebasing: b[(i + 4)..<(i + 8)]), as: UTF8.self) }
            guard crc(b, i + 4, length + 4) == UInt32(b.be32(data + length)) else { throw Failure("PNG: bad CRC in \(name()) chunk") }
            guard size != nil || type == IHDR else { throw Failure("PNG: first chunk is \(name()), not IHDR") }
            if idat == 1 && type != IDAT { idat = 2 }
            switch type {
            case IHDR:
                guard size == nil else { throw Failure("PNG: a second IHDR") }
                guard length == 13 else { throw Failure("PNG: IHDR length \(length)") }
                let width = b.be32(data), height = b.be32(data + 4), depth = b[data + 8]
                colourType = b[data + 9]
                guard width > 0, height > 0 else { throw Failure("PNG: zero dimension \(width)x\(height)") }
                guard width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else { throw Failure("PNG: dimension too large") }
                let depths: [UInt8]
                switch colourType {
                case 0: depths = [1, 2, 4, 8, 16]
                case 3: depths = [1, 2, 4, 8]
                case 2, 4, 6: depths = [8, 16]
                default: throw Failure("PNG: bad colour type \(colourType)")
                }
                guard depths.contains(depth) else { throw Failure("PNG: bit depth \(depth) with colour type \(colourType)") }
                guard b[data + 10] == 0, b[data + 11] == 0, b[data + 12] <= 1 else {
                    throw Failure("PNG: bad compression, filter or interlace method")
                }
                size = (width, height)
                bitsPerPixel = Int(depth) * [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colourType)]!
            case PLTE:
                guard !palette, idat == 0 else { throw Failure("PNG: misplaced PLTE") }
                guard colourType & 0x02 != 0 else { throw Failure("PNG: PLTE in a greyscale image") }
                guard length > 0, length <= 768, length % 3 == 0 else { throw Failure("PNG: PLTE length \(length)") }
                palette = true
            case IDAT:
                guard idat != 2 else { throw Failure("PNG: IDAT chunks are not consecutive") }
                guard colourType != 3 || palette else { throw Failure("PNG: no PLTE before IDAT in a palette image") }
                idat = 1
                idatBytes += length
                var p = data
                while zlibHeader.count < 2 && p < data + length { zlibHeader.append(b[p]); p += 1 }
            case IEND:
                guard length == 0 else { throw Failure("PNG: IEND length \(length)") }
                guard idat != 0 else { throw Failure("PNG: no IDAT") }
                // The zlib stream header (deflate, no preset dictionary) and room for its smallest body.
                guard zlibHeader.count == 2, zlibHeader[0] & 0x0F == 8, zlibHeader[0] >> 4 <= 7,
                      zlibHeader[1] & 0x20 == 0, (Int(zlibHeader[0]) << 8 | Int(zlibHeader[1])) % 31 == 0, idatBytes >= 8 else {
                    throw Failure("PNG: IDAT data is not a zlib stream")
                }
                // Deflate expands at most 1032:1, so fewer compressed bytes than
                // the pixel rows need (filter bytes aside) mean missing pixel data.
                if let (width, height) = size {
                    let rowBytes = (width.multipliedReportingOverflow(by: bitsPerPixel).partialValue + 7) / 8
                    let (needed, overflow) = rowBytes.multipliedReportingOverflow(by: height)
                    if overflow || idatBytes.multipliedReportingOverflow(by: 1032).partialValue < needed {
                        throw Failure("PNG: \(idatBytes) bytes of compressed data cannot hold \(width)x\(height) pixels")
                    }
                }
                // Bytes after IEND are ignored, as libpng and browsers do.
                return size ?? (0, 0)
            default:
                // An unknown critical chunk (upper-case first letter) cannot be skipped.
                guard b[i + 4] & 0x20 != 0 else { throw Failure("PNG: unknown critical chunk \(name())") }
            }
            i = data + length + 4
        }
    }

    // MARK: GIF

    /// Header, logical screen, colour table, then image descriptors and
    /// extensions made of sub-blocks, up to the trailer.
    static func gif(_ b: Bytes) throws(Failure) -> (width: Int, height: Int) {
        let n = b.count
        guard n >= 13, b[0] == 0x47, b[1] == 0x49, b[2] == 0x46, b[3] == 0x38, b[4] == 0x37 || b[4] == 0x39, b[5] == 0x61 else {
            throw Failure("GIF: bad signature")
        }
        let width = b.le16(6), height = b.le16(8)
        guard width > 0, height > 0 else { throw Failure("GIF: zero dimension \(width)x\(height)") }
        var i = 13
        if b[10] & 0x80 != 0 { i += 3 << (Int(b[10] & 0x07) + 1) }
        guard i <= n else { throw Failure("GIF: global colour table runs past the end") }
        var images = 0

        /// Skips data sub-blocks from `p` through their zero terminator; returns the next offset and the data size.
        func subBlocks(_ start: Int) throws(Failure) -> (next: Int, bytes: Int) {
            var p = start, bytes = 0
            while p < n {
                let count = Int(b[p])
                p += 1
                if count == 0 { return (p, bytes) }
                p += count
                bytes += count
            }
            throw Failure("GIF: truncated data sub-blocks")
        }

        while i < n {
            switch b[i] {
            case 0x2C:
                guard n - i >= 11 else { throw Failure("GIF: truncated image descriptor") }
                let left = b.le16(i + 1), top = b.le16(i + 3), w = b.le16(i + 5), h = b.le16(i + 7), flags = b[i + 9]
                guard left + w <= width, top + h <= height else { throw Failure("GIF: frame \(w)x\(h)+\(left)+\(top) outside the \(width)x\(height) screen") }
                i += 10
                if flags & 0x80 != 0 { i += 3 << (Int(flags & 0x07) + 1) }
                guard i < n else { throw Failure("GIF: local colour table runs past the end") }
                guard (2...8).contains(b[i]) else { throw Failure("GIF: bad LZW minimum code size \(b[i])") }
                let (next, bytes) = try subBlocks(i + 1)
                guard bytes > 0 else { throw Failure("GIF: image without data") }
                i = next
                images += 1
            case 0x21:
                guard n - i >= 3 else { throw Failure("GIF: truncated extension") }
                i = try subBlocks(i + 2).next
            case 0x3B:
                guard images > 0 else { throw Failure("GIF: no image") }
                return (width, height)
            default:
                throw Failure("GIF: unknown block \(hex(b[i])) at offset \(i)")
            }
        }
        throw Failure("GIF: truncated before the trailer")
    }

    // MARK: WebP

    static let VP8: UInt32 = 0x5650_3820, VP8L: UInt32 = 0x5650_384C, VP8X: UInt32 = 0x5650_3858
    static let ALPH: UInt32 = 0x414C_5048, ANIM: UInt32 = 0x414E_494D, ANMF: UInt32 = 0x414E_4D46

    /// A RIFF chunk: its fourcc, payload offset and size, and where the next chunk starts.
    struct Chunk { let fourcc: UInt32, data: Int, size: Int, next: Int }

    /// The chunk at `p`, which must end (with its pad byte) by `limit`.
    static func chunk(_ b: Bytes, _ p: Int, _ limit: Int) throws(Failure) -> Chunk {
        guard limit - p >= 8 else { throw Failure("WebP: truncated chunk header at offset \(p)") }
        let size = b.le32(p + 4)
        guard size + (size & 1) <= limit - p - 8 else { throw Failure("WebP: chunk at offset \(p) runs past its container") }
        return Chunk(fourcc: UInt32(b.be32(p)), data: p + 8, size: size, next: p + 8 + size + (size & 1))
    }

    /// The dimensions in a VP8 (lossy key frame) or VP8L (lossless) bitstream header.
    static func bitstream(_ b: Bytes, _ c: Chunk) throws(Failure) -> (width: Int, height: Int) {
        let d = c.data
        if c.fourcc == VP8 {
            guard c.size >= 10 else { throw Failure("WebP: VP8 chunk too short") }
            let tag = b.le24(d)
            guard tag & 1 == 0 else { throw Failure("WebP: VP8 data is not a key frame") }
            guard (tag >> 1) & 7 <= 3, (tag >> 4) & 1 == 1, tag >> 5 < c.size else { throw Failure("WebP: bad VP8 frame tag") }
            guard b[d + 3] == 0x9D, b[d + 4] == 0x01, b[d + 5] == 0x2A else { throw Failure("WebP: no VP8 start code") }
            let width = b.le16(d + 6) & 0x3FFF, height = b.le16(d + 8) & 0x3FFF
            guard width > 0, height > 0 else { throw Failure("WebP: zero dimension \(width)x\(height)") }
            return (width, height)
        }
        guard c.size >= 5 else { throw Failure("WebP: VP8L chunk too short") }
        guard b[d] == 0x2F else { throw Failure("WebP: no VP8L signature") }
        let bits = b.le32(d + 1)
        guard bits >> 29 == 0 else { throw Failure("WebP: bad VP8L version") }
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    }

    /// A RIFF WEBP container: a simple lossy (VP8) or lossless (VP8L) image,
    /// or an extended one (VP8X) with a still image or an animation.
    static func webp(_ b: Bytes) throws(Failure) -> (width: Int, height: Int) {
        let n = b.count
        guard n >= 12, b.be32(0) == 0x5249_4646, b.be32(8) == 0x5745_4250 else { throw Failure("WebP: bad RIFF header") }
        let riff = b.le32(4)
        guard riff & 1 == 0, riff >= 12 else { throw Failure("WebP: bad RIFF size \(riff)") }
        guard riff <= n - 8 else { throw Failure("WebP: RIFF size \(riff) larger than the \(n - 8) bytes present") }
        let end = 8 + riff
        let first = try chunk(b, 12, end)
        var size: (width: Int, height: Int)
        var p = first.next
        switch first.fourcc {
        case VP8, VP8L:
            size = try bitstream(b, first)
            while p < end { p = try chunk(b, p, end).next }
            return size
        case VP8X:
            guard first.size == 10 else { throw Failure("WebP: VP8X length \(first.size)") }
            size = (b.le24(first.data + 4) + 1, b.le24(first.data + 7) + 1)
            guard size.width * size.height < 1 << 32 else { throw Failure("WebP: canvas too large") }
        default:
            throw Failure("WebP: first chunk is not VP8, VP8L or VP8X")
        }
        let animated = b[first.data] & 0x02 != 0
        var image = false, alpha = false, anim = false, frames = 0
        while p < end {
            let c = try chunk(b, p, end)
            switch c.fourcc {
            case VP8X:
                throw Failure("WebP: a second VP8X")
            case ALPH:
                guard !animated, !image, !alpha else { throw Failure("WebP: misplaced ALPH chunk") }
                alpha = true
            case VP8, VP8L:
                guard !animated, !image else { throw Failure("WebP: misplaced image chunk") }
                guard try bitstream(b, c) == size else { throw Failure("WebP: image and canvas sizes differ") }
                image = true
            case ANIM:
                guard animated, !anim, frames == 0, c.size >= 6 else { throw Failure("WebP: misplaced ANIM chunk") }
                anim = true
            case ANMF:
                guard animated, anim, c.size >= 16 else { throw Failure("WebP: misplaced ANMF chunk") }
                let x = 2 * b.le24(c.data), y = 2 * b.le24(c.data + 3)
                var q = c.data + 16, frame: (width: Int, height: Int)?
                while q < c.data + c.size {
                    let sub = try chunk(b, q, c.data + c.size)
                    if sub.fourcc == VP8 || sub.fourcc == VP8L {
                        guard frame == nil else { throw Failure("WebP: two images in a frame") }
                        frame = try bitstream(b, sub)
                    }
                    q = sub.next
                }
                guard let frame else { throw Failure("WebP: a frame without an image") }
                guard x + frame.width <= size.width, y + frame.height <= size.height else { throw Failure("WebP: frame outside the canvas") }
                frames += 1
            default:
                break  // ICCP, EXIF, XMP and unknown chunks
            }
            p = c.next
        }
        guard animated ? frames > 0 : image else { throw Failure(animated ? "WebP: animation without frames" : "WebP: no image data") }
        return size
    }
}

/// `0xAB`, for messages.
private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return "0x" + (byte < 0x10 ? "0" : "") + digits
}

fileprivate extension UnsafeBufferPointer<UInt8> {
    func be16(_ i: Int) -> Int { Int(self[i]) << 8 | Int(self[i + 1]) }
    func be32(_ i: Int) -> Int { Int(self[i]) << 24 | Int(self[i + 1]) << 16 | Int(self[i + 2]) << 8 | Int(self[i + 3]) }
    func le16(_ i: Int) -> Int { Int(self[i]) | Int(self[i + 1]) << 8 }
    func le24(_ i: Int) -> Int { Int(self[i]) | Int(self[i + 1]) << 8 | Int(self[i + 2]) << 16 }
    func le32(_ i: Int) -> Int { le24(i) | Int(self[i + 3]) << 24 }
}
