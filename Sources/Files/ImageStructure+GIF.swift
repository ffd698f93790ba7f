import Foundation

extension ImageStructure {
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
}
