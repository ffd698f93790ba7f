import CVipsShim
@testable import Files
import Foundation
import RoostTestSupport
import Testing

/// Images made for real by libvips (libjpeg-turbo, libpng, cgif, libwebp), then
/// checked, cut, flipped and patched.
@Suite struct ImageStructureTests {
    static let started: Bool = (try? Vips.start()) != nil

    /// A gradient encoded through a libvips save suffix, e.g. ".jpg[interlace]".
    static func encode(_ width: Int, _ height: Int, bands: Int = 3, pages: Int = 1, _ suffix: String) throws -> [UInt8] {
        #expect(started)
        var out: UnsafeMutableRawPointer?
        var length = 0
        var err = [CChar](repeating: 0, count: 512)
        let errLength = err.count
        let rc = roost_vips_test_encode(Int32(width), Int32(height), Int32(bands), Int32(pages), suffix, &out, &length, &err, errLength)
        guard rc == 0, let out else { throw Vips.Failure(description: String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        defer { roost_vips_free(out) }
        return Array(UnsafeRawBufferPointer(start: out, count: length))
    }

    static func synthesize(_ width: Int, _ height: Int, _ format: Vips.Format) throws -> [UInt8] {
        #expect(started)
        return try Vips.synthesize(width: width, height: height, format: format)
    }

    /// Valid images from the encoders uploads come from.
    enum Sample: String, CaseIterable, Sendable {
        case jpeg, jpegProgressive, jpegGrey, jpegNoSubsampling, jpegRestarts
        case png, pngAlpha, pngInterlaced, pngPalette, pngOneBitPalette, png16, pngGrey
        case gif, gifAnimated
        case webp, webpLossless, webpAlpha, webpLosslessAlpha, webpAnimated
        /// The simple formats cwebp writes (libvips always writes VP8X): the bitstream chunk alone.
        case webpSimple, webpLosslessSimple

        var type: MediaType {
            switch self {
            case .jpeg, .jpegProgressive, .jpegGrey, .jpegNoSubsampling, .jpegRestarts: return .jpeg
            case .png, .pngAlpha, .pngInterlaced, .pngPalette, .pngOneBitPalette, .png16, .pngGrey: return .png
            case .gif, .gifAnimated: return .gif
            case .webp, .webpLossless, .webpAlpha, .webpLosslessAlpha, .webpAnimated, .webpSimple, .webpLosslessSimple: return .webp
            }
        }

        var size: (width: Int, height: Int) {
            switch self {
            case .jpeg, .png, .gif, .webp, .webpSimple: return (300, 200)
            case .gifAnimated, .webpAnimated: return (64, 48)
            default: return (97, 61)
            }
        }

        func bytes() throws -> [UInt8] {
            let (w, h) = size
            switch self {
            case .jpeg: return try ImageStructureTests.synthesize(w, h, .jpeg)
            case .png: return try ImageStructureTests.synthesize(w, h, .png)
            case .gif: return try ImageStructureTests.synthesize(w, h, .gif)
            case .webp: return try ImageStructureTests.synthesize(w, h, .webp)
            case .jpegProgressive: return try ImageStructureTests.encode(w, h, ".jpg[interlace,Q=85]")
            case .jpegGrey: return try ImageStructureTests.encode(w, h, bands: 1, ".jpg")
            case .jpegNoSubsampling: return try ImageStructureTests.encode(w, h, ".jpg[subsample_mode=off,optimize_coding]")
            case .jpegRestarts: return try ImageStructureTests.encode(w, h, ".jpg[restart_interval=2]")
            case .pngAlpha: return try ImageStructureTests.encode(w, h, bands: 4, ".png")
            case .pngInterlaced: return try ImageStructureTests.encode(w, h, ".png[interlace]")
            case .pngPalette: return try ImageStructureTests.encode(w, h, ".png[palette]")
            case .pngOneBitPalette: return try ImageStructureTests.encode(w, h, ".png[palette,bitdepth=1]")
            case .png16: return try ImageStructureTests.encode(w, h, ".png[bitdepth=16]")
            case .pngGrey: return try ImageStructureTests.encode(w, h, bands: 1, ".png")
            case .gifAnimated: return try ImageStructureTests.encode(w, h, pages: 3, ".gif")
            case .webpLossless: return try ImageStructureTests.encode(w, h, ".webp[lossless]")
            case .webpAlpha: return try ImageStructureTests.encode(w, h, bands: 4, ".webp[Q=80]")
            case .webpLosslessAlpha: return try ImageStructureTests.encode(w, h, bands: 4, ".webp[lossless]")
            case .webpAnimated: return try ImageStructureTests.encode(w, h, pages: 3, ".webp")
            case .webpSimple: return try WebP.simple(Sample.webp.bytes(), "VP8 ")
            case .webpLosslessSimple: return try WebP.simple(Sample.webpLossless.bytes(), "VP8L")
            }
        }
    }

    /// The failure for `bytes`, or nil when they pass.
    func failure(_ bytes: [UInt8], _ type: MediaType) -> ImageStructure.Failure? {
        do { _ = try ImageStructure.check(bytes, type); return nil } catch { return error }
    }

    @Test(arguments: Sample.allCases)
    func validImagesPass(_ sample: Sample) throws {
        let bytes = try sample.bytes()
        try Vips.validate(bytes)  // the sample itself is sound
        let size = try ImageStructure.check(bytes, sample.type)
        #expect(size == sample.size, "\(sample)")
    }

    @Test(arguments: Sample.allCases)
    func truncationFails(_ sample: Sample) throws {
        let bytes = try sample.bytes()
        let n = bytes.count
        let cuts = Set((0..<16).map { n * $0 / 16 } + [1, 2, 7, 8, 12, 13, 20, n - 2, n - 1])
        for cut in cuts.sorted() {
            #expect(failure(Array(bytes.prefix(cut)), sample.type) != nil, "\(sample) cut at \(cut) of \(n)")
        }
    }

    /// Bytes after the image are allowed, as decoders and browsers ignore them.
    @Test(arguments: Sample.allCases)
    func trailingBytes(_ sample: Sample) throws {
        let bytes = try sample.bytes() + Array("appended by a camera".utf8)
        let error = failure(bytes, sample.type)
        #expect(error == nil, "\(sample): \(String(describing: error))")
    }

    /// A few extraneous bytes before a JPEG marker pass (libjpeg warns and
    /// decodes); a long run of them does not.
    @Test func jpegExtraneousBytesBeforeAMarker() throws {
        let bytes = try Sample.jpeg.bytes()
        // Right after SOI, before the first segment's marker.
        let few = [UInt8](bytes[0..<2]) + [1, 2, 3] + bytes[2...]
        #expect(failure(few, .jpeg) == nil)
        let many = [UInt8](bytes[0..<2]) + [UInt8](repeating: 7, count: 40) + bytes[2...]
        #expect(failure(many, .jpeg) != nil)
    }

    @Test(arguments: [Sample.png, .pngAlpha, .pngPalette])
    func pngFlippedByteFailsTheCRC(_ sample: Sample) throws {
        let bytes = try sample.bytes()
        for chunk in PNG.chunks(bytes) {
            for at in Set([chunk.offset + 4, chunk.offset + 8, chunk.offset + 8 + chunk.data.count / 2, chunk.offset + 8 + chunk.data.count]) {
                var flipped = bytes
                flipped[at] ^= 0x10
                let error = failure(flipped, .png)
                #expect(error?.description.contains("CRC") == true || error?.description.contains("chunk type") == true,
                        "\(chunk.type) at \(at): \(String(describing: error))")
            }
        }
    }

    @Test(arguments: [Sample.jpeg, .jpegProgressive, .jpegRestarts])
    func jpegBadMarkerInEntropyDataFails(_ sample: Sample) throws {
        let bytes = try sample.bytes()
        for scan in JPEG.scans(bytes) {
            var at = (scan.lowerBound + scan.upperBound) / 2
            while bytes[at - 1] == 0xFF { at += 1 }  // not between an 0xFF and its stuffing
            var bad = bytes
            bad.insert(contentsOf: [0xFF, 0x13], at: at)
            #expect(failure(bad, .jpeg)?.description.contains("bad byte 0x13 after 0xFF in entropy-coded data") == true, "\(sample) scan \(scan)")
            // Stuffing is structure, not a marker: a structural check cannot see the bits it changes.
            var stuffed = bytes
            stuffed.insert(contentsOf: [0xFF, 0x00], at: at)
            #expect(failure(stuffed, .jpeg) == nil)
        }
    }

    @Test(arguments: [MediaType.jpeg, .png, .gif, .webp])
    func randomBytesAfterASignatureFail(_ type: MediaType) {
        var random = SeededGenerator(seed: 42)
        for round in 0..<200 {
            var bytes: [UInt8]
            switch type {
            case .jpeg: bytes = [0xFF, 0xD8]
            case .png: bytes = ImageStructure.pngSignature
            case .gif: bytes = Array((round % 2 == 0 ? "GIF89a" : "GIF87a").utf8)
            default: bytes = Array("RIFF\0\0\0\0WEBP".utf8)
            }
            bytes += (0..<(round * 37 % 3000 + 2)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if type == .webp {
                bytes += bytes.count % 2 == 0 ? [] : [0]
                bytes.replaceLE32(at: 4, UInt32(bytes.count - 8))  // a correct RIFF size, so the chunks are walked
            }
            #expect(failure(bytes, type) != nil, "\(type) round \(round)")
        }
    }

    @Test func zeroDimensionsFail() throws {
        // JPEG: the frame header's height, then width.
        let jpeg = try Sample.jpeg.bytes()
        let sof = try #require(JPEG.segments(jpeg).first { $0.marker == 0xC0 })
        for field in [sof.offset + 5, sof.offset + 7] {
            var zero = jpeg
            zero[field] = 0
            zero[field + 1] = 0
            #expect(failure(zero, .jpeg)?.description.contains("zero dimension") == true)
        }
        // PNG: IHDR width, then height, with the CRC made right again.
        let png = try Sample.png.bytes()
        for field in [16, 20] {
            var chunks = PNG.chunks(png)
            chunks[0].data.replaceSubrange((field - 16)..<(field - 12), with: [0, 0, 0, 0])
            #expect(failure(PNG.build(chunks), .png)?.description.contains("zero dimension") == true)
        }
        // GIF: the logical screen's width, then height.
        let gif = try Sample.gif.bytes()
        for field in [6, 8] {
            var zero = gif
            zero[field] = 0
            zero[field + 1] = 0
            #expect(failure(zero, .gif)?.description.contains("zero dimension") == true)
        }
        // WebP: the VP8 key frame's 14-bit width, then height, in the extended and the simple format.
        for webp in [try Sample.webp.bytes(), try Sample.webpSimple.bytes()] {
            let vp8 = try #require(WebP.chunk(webp, "VP8 "))
            for field in [vp8.lowerBound + 6, vp8.lowerBound + 8] {
                var zero = webp
                zero[field] = 0
                zero[field + 1] &= 0xC0
                #expect(failure(zero, .webp)?.description.contains("zero dimension") == true)
            }
        }
    }

    @Test(arguments: [Sample.webp, .webpLossless, .webpAnimated, .webpSimple, .webpLosslessSimple])
    func webpRiffSizeMustFitTheData(_ sample: Sample) throws {
        let bytes = try sample.bytes()
        for riff in [bytes.count - 6, bytes.count, 1 << 31] {
            var big = bytes
            big.replaceLE32(at: 4, UInt32(riff))
            #expect(failure(big, .webp)?.description.contains("RIFF size") == true, "\(riff)")
        }
        var odd = bytes
        odd.replaceLE32(at: 4, UInt32(bytes.count - 9))
        #expect(failure(odd, .webp) != nil)
        // A RIFF size that cuts the last chunk short.
        var short = bytes
        short.replaceLE32(at: 4, UInt32(bytes.count - 8 - 2))
        #expect(failure(short, .webp) != nil)
    }
}
