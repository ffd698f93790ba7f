@testable import Files
import Foundation
import Testing

/// libvips is not linked: `Vips.start` loads it at run time.
@Suite struct VipsLoaderTests {
    @Test func startLoadsTheLibraryAtRunTime() throws {
        #expect(Vips.libraryName == (ProcessInfo.processInfo.environment["ROOST_LIBVIPS"] ?? "libvips.so.42"))
        try Vips.start()
        try Vips.start()  // later calls only report
        #expect(Vips.isLoaded)
        // /proc files have no size: read to the end.
        let maps = String(decoding: try #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile(), as: UTF8.self)
        #expect(maps.contains("libvips.so.42"))
        // Header, pixels and a thumbnail, all through the resolved functions.
        let png = try Vips.synthesize(width: 40, height: 30, format: .png)
        let header = try Vips.probe(png)
        #expect(header.width == 40 && header.height == 30)
        try Vips.validate(png)
        #expect(throws: Vips.Failure.self) { try Vips.probe(Array("not an image".utf8)) }
    }
}
