import CVipsShim
@testable import Files
import Foundation
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
        var random = SplitMix64(seed: 42)
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

    /// PNG chunk order and content rules, on chunks rebuilt with correct CRCs.
    @Test func pngChunkRules() throws {
        let png = PNG.chunks(try Sample.png.bytes())
        let palette = PNG.chunks(try Sample.pngPalette.bytes())
        let idat = try #require(png.firstIndex { $0.type == "IDAT" })
        let half = png[idat].data.count / 2
        let split = Array(png[..<idat]) + [
            PNG.Chunk(type: "IDAT", data: Array(png[idat].data[..<half])),
            PNG.Chunk(type: "IDAT", data: Array(png[idat].data[half...])),
        ] + Array(png[(idat + 1)...])
        func ihdr(_ patch: (inout [UInt8]) -> Void) -> [PNG.Chunk] {
            var chunks = png
            patch(&chunks[0].data)
            return chunks
        }
        let cases: [(String, [PNG.Chunk], Bool)] = [
            ("as written", png, true),
            ("IDAT split in two", split, true),
            ("an ancillary chunk skipped", Array(png[...0]) + [PNG.Chunk(type: "teXt", data: Array("a\0b".utf8))] + png[1...], true),
            ("a chunk between IDATs", Array(split[...(idat)]) + [PNG.Chunk(type: "teXt", data: [])] + split[(idat + 1)...], false),
            ("an unknown critical chunk", Array(png[...0]) + [PNG.Chunk(type: "ABCD", data: [])] + png[1...], false),
            ("no IDAT", png.filter { $0.type != "IDAT" }, false),
            ("IHDR not first", [png[1], png[0]] + png[2...], false),
            ("two IHDRs", [png[0]] + png, false),
            ("IEND with data", Array(png.dropLast()) + [PNG.Chunk(type: "IEND", data: [0])], false),
            ("IDAT not zlib", png.map { $0.type == "IDAT" ? PNG.Chunk(type: "IDAT", data: [0x12] + $0.data.dropFirst()) : $0 }, false),
            ("bit depth 3", ihdr { $0[8] = 3 }, false),
            ("RGB at bit depth 4", ihdr { $0[8] = 4 }, false),
            ("colour type 5", ihdr { $0[9] = 5 }, false),
            ("interlace 2", ihdr { $0[12] = 2 }, false),
            ("filter method 1", ihdr { $0[11] = 1 }, false),
            // 1,000,000 pixels wide: deflate (at most 1032:1) cannot fit the rows in the sample's IDAT.
            ("more pixels than the data can hold", ihdr { $0[0] = 0; $0[1] = 0x0F; $0[2] = 0x42; $0[3] = 0x40 }, false),
            ("palette as written", palette, true),
            ("palette without PLTE", palette.filter { $0.type != "PLTE" }, false),
            ("PLTE after IDAT", palette.filter { $0.type != "PLTE" && $0.type != "IEND" } + palette.filter { $0.type == "PLTE" } + [palette[palette.count - 1]], false),
            ("PLTE of 2 bytes", palette.map { $0.type == "PLTE" ? PNG.Chunk(type: "PLTE", data: [1, 2]) : $0 }, false),
        ]
        for (name, chunks, valid) in cases {
            let error = failure(PNG.build(chunks), .png)
            #expect((error == nil) == valid, "\(name): \(String(describing: error))")
        }
    }

    @Test func gifBlockRules() throws {
        let gif = try Sample.gif.bytes()
        // The first image descriptor follows the 13-byte header, the global colour table and any extensions.
        var at = 13 + (gif[10] & 0x80 != 0 ? 3 << (Int(gif[10] & 7) + 1) : 0)
        while gif[at] == 0x21 {
            at += 2
            while gif[at] != 0 { at += Int(gif[at]) + 1 }
            at += 1
        }
        #expect(gif[at] == 0x2C)
        var outside = gif
        outside[at + 1] = 1  // left = 1: the 300-wide frame no longer fits the screen
        #expect(failure(outside, .gif)?.description.contains("outside") == true)
        let codeSize = at + 10 + (gif[at + 9] & 0x80 != 0 ? 3 << (Int(gif[at + 9] & 7) + 1) : 0)
        var badCode = gif
        badCode[codeSize] = 9
        #expect(failure(badCode, .gif)?.description.contains("LZW") == true)
        var unknown = gif
        unknown.insert(0x99, at: at)
        #expect(failure(unknown, .gif)?.description.contains("unknown block") == true)
        #expect(failure(Array(gif[..<10]) + [gif[10] & 0x7F, 0, 0, 0x3B], .gif)?.description.contains("no image") == true)
    }

    @Test func jpegMarkerRules() throws {
        let jpeg = try Sample.jpeg.bytes()
        let segments = JPEG.segments(jpeg)
        let sof = try #require(segments.first { $0.marker == 0xC0 })
        let sos = try #require(segments.first { $0.marker == 0xDA })
        let dqt = try #require(segments.first { $0.marker == 0xDB })
        func patched(_ at: Int, _ value: UInt8) -> [UInt8] { var b = jpeg; b[at] = value; return b }
        let cases: [(String, [UInt8], Bool)] = [
            ("fill bytes before a marker", Array(jpeg[..<sof.offset]) + [0xFF, 0xFF] + jpeg[sof.offset...], true),
            ("no SOI", Array(jpeg.dropFirst(2)), false),
            ("EOI right after SOI", [0xFF, 0xD8, 0xFF, 0xD9], false),
            ("five components", patched(sof.offset + 9, 5), false),
            ("precision 9", patched(sof.offset + 4, 9), false),
            ("segment length past the end", patched(sof.offset + 2, 0xFF), false),
            ("segment length 1", patched(sof.offset + 3, 1).replacing(at: sof.offset + 2, 0), false),
            ("scan before the frame", Array(jpeg[..<dqt.offset]) + jpeg[sos.offset...], false),
            ("no quantisation tables", jpeg.removing(segments.filter { $0.marker == 0xDB }), false),
            ("a second frame header", Array(jpeg[..<sos.offset]) + jpeg[sof.offset..<(sof.offset + sof.length + 2)] + jpeg[sos.offset...], false),
            ("a scan of an unknown component", patched(sos.offset + 5, 0x77), false),
            ("a stray RST between segments", Array(jpeg[..<sof.offset]) + [0xFF, 0xD0] + jpeg[sof.offset...], false),
        ]
        for (name, bytes, valid) in cases {
            let error = failure(bytes, .jpeg)
            #expect((error == nil) == valid, "\(name): \(String(describing: error))")
        }
    }

    @Test func webpChunkRules() throws {
        let alpha = try Sample.webpAlpha.bytes()
        #expect(Array(alpha[12..<16]) == Array("VP8X".utf8))
        var noImage = Array(alpha[..<30])
        noImage.replaceLE32(at: 4, UInt32(noImage.count - 8))
        #expect(failure(noImage, .webp)?.description.contains("no image") == true)
        var stillFlag = try Sample.webpAnimated.bytes()
        stillFlag[20] &= ~0x02  // ANIM and ANMF without the animation flag
        #expect(failure(stillFlag, .webp)?.description.contains("ANIM") == true)
        var canvas = alpha
        canvas[24] ^= 0x01  // the canvas no longer matches the image
        #expect(failure(canvas, .webp)?.description.contains("differ") == true)
        for var lossless in [try Sample.webpLossless.bytes(), try Sample.webpLosslessSimple.bytes()] {
            let vp8l = try #require(WebP.chunk(lossless, "VP8L"))
            lossless[vp8l.lowerBound] = 0x2E
            #expect(failure(lossless, .webp)?.description.contains("VP8L signature") == true)
        }
        var lossy = try Sample.webpSimple.bytes()
        lossy[20] |= 0x01  // an inter frame
        #expect(failure(lossy, .webp)?.description.contains("key frame") == true)
        #expect(failure(Array("RIFF\u{4}\0\0\0WEBP".utf8), .webp) != nil)
    }

    @Test func otherTypesHaveNoCheck() {
        #expect(failure(Array("%PDF-1.7".utf8), MediaType("application/pdf")) != nil)
    }

    /// Prints the cost of a check of synthesized JPEGs (1280x960 is ~50 KB of
    /// gradient here, 2560x1920 ~200 KB); no assertion on time. A gradient has
    /// almost no 0xFF bytes, while a photo's entropy-coded data has one (stuffed
    /// as FF 00) about every 256 bytes, so a copy with that much stuffing is
    /// timed too: structurally valid, though no longer the same picture.
    @Test(arguments: [(1280, 960), (2560, 1920)])
    func timingOfALargeJPEG(width: Int, height: Int) throws {
        let jpeg = try Self.synthesize(width, height, .jpeg)
        var photoLike = jpeg
        for scan in JPEG.scans(jpeg).reversed() {
            for at in stride(from: scan.upperBound - 1, to: scan.lowerBound, by: -256) where jpeg[at - 1] != 0xFF {
                photoLike.insert(contentsOf: [0xFF, 0x00], at: at)
            }
        }
        for (name, bytes) in [("synthesized", jpeg), ("photo-like", photoLike)] {
            #expect(try ImageStructure.check(bytes, .jpeg) == (width, height))
            let rounds = 200
            let start = ContinuousClock.now
            for _ in 0..<rounds { _ = try ImageStructure.check(bytes, .jpeg) }
            let elapsed = ContinuousClock.now - start
            let micros = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
            print(String(format: "ImageStructure.check: %.1f µs per check of a %ldx%ld %@ JPEG, %ld bytes, %ld of them 0xFF (%ld rounds)",
                         micros / Double(rounds), width, height, name, bytes.count, bytes.count { $0 == 0xFF }, rounds))
        }
    }
}

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

struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
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

