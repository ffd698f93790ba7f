import CVipsShim
@testable import Files
import Foundation
import Testing

// The format rules of ImageStructure, one test per format (the suite is in ImageStructureTests.swift).
extension ImageStructureTests {
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
