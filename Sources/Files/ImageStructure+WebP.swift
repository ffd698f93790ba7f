import Foundation

extension ImageStructure {
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
