@testable import Files
import Testing

@Suite struct MediaTypeTests {
    @Test func sniffsMagicNumbers() {
        #expect(MediaType.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == .png)
        #expect(MediaType.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(MediaType.sniff(Array("GIF89a....".utf8)) == .gif)
        #expect(MediaType.sniff(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(MediaType.sniff(Array("<svg></svg>".utf8)) == nil)
        #expect(MediaType("image/JPG") == .jpeg)
        #expect(!MediaType("image/svg+xml").isSafeInline)
        #expect(MediaType.png.thumbnailFormat == .webp && MediaType.jpeg.thumbnailFormat == .jpeg)
    }
}
