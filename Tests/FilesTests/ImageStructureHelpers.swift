@testable import Files
import Foundation
import Testing

/// PNG chunks, for rebuilding files with correct CRCs.
enum PNG {
    struct Chunk { var type: String; var data: [UInt8]; var offset = 0 }

    static func chunks(_ b: [UInt8]) -> [Chunk] {
        var out: [Chunk] = [], i = 8
        while i + 12 <= b.count {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            out.append(Chunk(type: String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self), data: Array(b[(i + 8)..<(i + 8 + length)]), offset: i))
            i += 12 + length
        }
        return out
    }

    static func build(_ chunks: [Chunk]) -> [UInt8] {
        var out = ImageStructure.pngSignature
        for chunk in chunks {
            let body = Array(chunk.type.utf8) + chunk.data
            let crc = body.withUnsafeBufferPointer { ImageStructure.crc($0, 0, $0.count) }
            out += be32(UInt32(chunk.data.count)) + body + be32(crc)
        }
        return out
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}

/// WebP chunks.
enum WebP {
    /// The payload of the first top-level chunk named `fourcc`.
    static func chunk(_ b: [UInt8], _ fourcc: String) -> Range<Int>? {
        var i = 12
        while i + 8 <= b.count {
            let size = Int(b[i + 4]) | Int(b[i + 5]) << 8 | Int(b[i + 6]) << 16 | Int(b[i + 7]) << 24
            if b[i..<(i + 4)].elementsEqual(fourcc.utf8) { return (i + 8)..<min(i + 8 + size, b.count) }
            i += 8 + size + (size & 1)
        }
        return nil
    }

    /// A simple-format file holding just the `fourcc` bitstream chunk of `b`.
    static func simple(_ b: [UInt8], _ fourcc: String) throws -> [UInt8] {
        let data = try #require(chunk(b, fourcc))
        var out = Array("RIFF\0\0\0\0WEBP\(fourcc)".utf8) + [0, 0, 0, 0] + b[data] + (data.count % 2 == 1 ? [0] : [])
        out.replaceLE32(at: 16, UInt32(data.count))
        out.replaceLE32(at: 4, UInt32(out.count - 8))
        return out
    }
}

/// JPEG marker segments and scans, found by walking the file.
enum JPEG {
    struct Segment { let marker: UInt8, offset: Int, length: Int }

    /// Segments before the first scan's data, and each later one found after entropy-coded data.
    static func segments(_ b: [UInt8]) -> [Segment] {
        var out: [Segment] = [], i = 2
        while i + 4 <= b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            if marker == 0xD9 { break }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            out.append(Segment(marker: marker, offset: i, length: length))
            i += 2 + length
            if marker == 0xDA {  // skip the entropy-coded data to the next marker
                while i + 1 < b.count, !(b[i] == 0xFF && b[i + 1] != 0 && !(0xD0...0xD7).contains(b[i + 1])) { i += 1 }
            }
        }
        return out
    }

    /// The entropy-coded data of each scan.
    static func scans(_ b: [UInt8]) -> [Range<Int>] {
        let all = segments(b)
        return all.enumerated().compactMap { index, s in
            guard s.marker == 0xDA else { return nil }
            let end = index + 1 < all.count ? all[index + 1].offset : b.count - 2
            return (s.offset + 2 + s.length)..<end
        }
    }
}


extension [UInt8] {
    mutating func replaceLE32(at i: Int, _ v: UInt32) {
        for k in 0..<4 { self[i + k] = UInt8(v >> (8 * UInt32(k)) & 0xFF) }
    }

    func replacing(at i: Int, _ v: UInt8) -> [UInt8] { var b = self; b[i] = v; return b }

    /// Without the given JPEG segments.
    func removing(_ segments: [JPEG.Segment]) -> [UInt8] {
        var b = self
        for s in segments.sorted(by: { $0.offset > $1.offset }) { b.removeSubrange(s.offset..<(s.offset + 2 + s.length)) }
        return b
    }
}

