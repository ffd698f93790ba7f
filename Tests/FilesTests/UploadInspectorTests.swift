@testable import Files
import Foundation
import Testing

@Suite struct UploadInspectorTests {
    static let started: Bool = (try? Vips.start()) != nil
    let inspector = UploadInspector(maxBytes: 64 << 20, maxPixels: 4_000_000)

    func image(_ w: Int, _ h: Int, _ f: Vips.Format) throws -> [UInt8] {
        #expect(Self.started)
        return try Vips.synthesize(width: w, height: h, format: f)
    }

    @Test func detectsTypeAndMeasures() throws {
        let jpeg = try image(300, 200, .jpeg)
        let ok = try inspector.inspect(body: jpeg, contentType: "image/jpeg")
        #expect(ok.contentType == .jpeg && ok.width == 300 && ok.height == 200)
        #expect(ok.sha256.count == 64)
        // An undeclared or generic type is detected from the bytes.
        #expect(try inspector.inspect(body: jpeg, contentType: nil).contentType == .jpeg)
        #expect(try inspector.inspect(body: jpeg, contentType: "application/octet-stream").contentType == .jpeg)
        // Non-images keep their declared type and get no dimensions.
        let text = try inspector.inspect(body: Array("hello".utf8), contentType: "text/plain; charset=utf-8")
        #expect(text.contentType == MediaType("text/plain") && !text.isImage)
    }

    /// A WebP payload carries no checksum: a mangled one whose chunk sizes
    /// still add up is found by decoding it before the 201.
    @Test func mangledWebPWithIntactContainerIsRefused() throws {
        var bytes = try image(400, 300, .webp)
        #expect(throws: Never.self) { try inspector.inspect(body: bytes, contentType: nil) }
        // Overwrite the middle third with a pattern; every length field stays as it was.
        let start = bytes.count / 3
        for i in start..<(2 * bytes.count / 3) { bytes[i] = UInt8(truncatingIfNeeded: i &* 37) | 0x01 }
        #expect(throws: UploadError.self) { try inspector.inspect(body: bytes, contentType: nil) }
    }

    @Test(arguments: [
        ("image/png", "gif", 415), ("image/png", "truncated-png", 422), ("image/jpeg", "truncated-jpeg", 422),
        ("image/png", "bomb", 422), ("image/png", "empty", 400), ("image/webp", "text", 415),
    ])
    func refuses(declared: String, kind: String, status: Int) throws {
        let png = try image(400, 300, .png), jpeg = try image(400, 300, .jpeg)
        let body: [UInt8]
        switch kind {
        case "gif": body = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 32)
        case "truncated-png": body = Array(png.prefix(png.count / 2))
        case "truncated-jpeg": body = Array(jpeg.prefix(jpeg.count / 2))
        case "bomb": body = try image(2100, 2000, .png)
        case "empty": body = []
        default: body = Array("plain text".utf8)
        }
        #expect(throws: UploadError.self) { try inspector.inspect(body: body, contentType: declared) }
        do { _ = try inspector.inspect(body: body, contentType: declared) } catch { #expect(error.status == status, "\(error)") }
    }

    @Test func multipartFilePart() throws {
        let body = Array("--b\r\nContent-Disposition: form-data; name=\"t\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a b.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n".utf8)
        let part = try #require(Multipart.filePart(body, boundary: "b"))
        #expect(part.bytes == Array("hello".utf8))
        #expect(part.filename == "a b.txt" && part.contentType == "text/plain")
        #expect(Multipart.boundary("multipart/form-data; boundary=\"xyz\"") == "xyz")
        #expect(Multipart.filePart(Array("junk".utf8), boundary: "b") == nil)
    }

    @Test func layoutFansOutByTheCounter() {
        let layout = FileLayout(dataDir: "/d")
        #expect(layout.objectPath("6b021b262dbb8361c1b82a1c") == "/d/files/objects/1c/6b021b262dbb8361c1b82a1c")
        #expect(FileLayout.isValidID("6b021b262dbb8361c1b82a1c"))
        #expect(!FileLayout.isValidID("../../etc/passwd.........."))
    }

    @Test func singleFlightRunsOnceForConcurrentCallers() {
        let flight = SingleFlight<String, Int>()
        let starts = LockedCounter()
        let results = LockedCounter()
        var pending: (@Sendable (Int) -> Void)?
        for _ in 0..<5 {
            flight.join("k", refused: -1, waiter: { v in if v == 42 { results.add() } }) { finish in
                starts.add()
                pending = finish
                return true
            }
        }
        pending?(42)
        #expect(starts.value == 1 && results.value == 5 && flight.inFlight == 0)
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
