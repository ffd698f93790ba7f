import Foundation
@testable import Files
import HTTP
import Testing

@Suite struct FileSegmentTests {
    func withFile(_ bytes: [UInt8], _ body: (String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "roost-segment-" + UUID().uuidString
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        defer { unlink(path) }
        try body(path)
    }

    @Test func smallRangesAreRead() throws {
        let bytes = (0..<1000).map { UInt8($0 & 0xFF) }
        try withFile(bytes) { path in
            guard case .bytes(let all)? = try FileSegment.open(path, limit: 1 << 20) else { Issue.record("expected bytes"); return }
            #expect(all == bytes)
            guard case .bytes(let part)? = try FileSegment.open(path, offset: 10, length: 5, limit: 1 << 20) else {
                Issue.record("expected bytes"); return
            }
            #expect(part == Array(bytes[10..<15]))
        }
    }

    /// A large file just written is in the page cache: it comes back as a
    /// descriptor for sendfile, with the range asked for.
    @Test func cachedLargeRangesComeBackAsADescriptor() throws {
        let bytes = (0..<(200 * 1024)).map { UInt8(($0 * 7) & 0xFF) }
        try withFile(bytes) { path in
            guard case .cached(let body)? = try FileSegment.open(path, offset: 1000, length: 100_000, limit: 1 << 20) else {
                Issue.record("expected a cached descriptor"); return
            }
            #expect(body.offset == 1000 && body.length == 100_000)
            let fd = body.take()
            defer { close(fd) }
            var first = [UInt8](repeating: 0, count: 4)
            #expect(pread(fd, &first, 4, 1000) == 4)
            #expect(first == Array(bytes[1000..<1004]))
        }
    }

    /// cachestat and mincore agree, for a cached file and after asking the
    /// kernel to drop it (on tmpfs nothing is dropped; both must still agree).
    @Test func residencyChecksAgree() throws {
        let bytes = [UInt8](repeating: 7, count: 256 * 1024)
        try withFile(bytes) { path in
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            #expect(FileSegment.isResident(fd, offset: 0, count: bytes.count))
            #expect(FileSegment.isResidentByMincore(fd, offset: 0, count: bytes.count))
            fdatasync(fd)
            posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            #expect(FileSegment.isResident(fd, offset: 4096, count: 100_000)
                    == FileSegment.isResidentByMincore(fd, offset: 4096, count: 100_000))
        }
    }

    @Test func absentFilesAndLimits() throws {
        #expect(try FileSegment.open("/nonexistent/roost-file", limit: 10) == nil)
        try withFile([UInt8](repeating: 1, count: 100)) { path in
            #expect(throws: DurableFile.Failure.self) { try FileSegment.open(path, limit: 10) }
        }
    }
}
