import CZlib
import Foundation

extension ImageStructure {
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
}
