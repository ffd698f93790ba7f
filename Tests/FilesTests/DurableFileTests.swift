import Foundation
@testable import Files
import Testing

@Suite struct DurableFileTests {
    /// A scratch data directory with its `tmp` and an object directory.
    func withDirectory(_ body: (_ root: String, _ tmp: String) throws -> Void) throws {
        let root = NSTemporaryDirectory() + "roost-durable-" + UUID().uuidString
        let tmp = root + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(root, tmp)
    }

    func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    /// A new file gets its bytes under its name, creating the directory, and
    /// leaves nothing in the temporary directory.
    @Test func writesANewFileWithNothingLeftBehind() throws {
        try withDirectory { root, tmp in
            let path = root + "/objects/ab/file-1"
            let bytes = (0..<70_000).map { UInt8(($0 * 13) & 0xFF) }
            try DurableFile.write(bytes, to: path, tmpDir: tmp)
            #expect(contents(path) == bytes)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp))?.isEmpty == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/objects/ab") == ["file-1"])
        }
    }

    /// On Linux file systems with O_TMPFILE (ext4, xfs, btrfs, tmpfs) the
    /// unnamed path itself names the file.
    @Test func unnamedFilesGetTheirName() throws {
        try withDirectory { root, _ in
            let path = root + "/file-2"
            let named = try DurableFile.writeUnnamed(Array("bytes".utf8), to: path, in: root, sync: true)
            #expect(named)
            #expect(contents(path) == Array("bytes".utf8))
        }
    }

    /// The unnamed-file path never replaces a file; `write` then falls back
    /// to a temporary that it renames over the old one.
    @Test func replacesAnExistingFile() throws {
        try withDirectory { root, tmp in
            let path = root + "/thumb"
            try DurableFile.write(Array("old".utf8), to: path, tmpDir: tmp, sync: false)
            let replaced = try DurableFile.writeUnnamed(Array("new".utf8), to: path, in: root, sync: false)
            #expect(!replaced)
            #expect(contents(path) == Array("old".utf8))
            try DurableFile.write(Array("new".utf8), to: path, tmpDir: tmp, sync: false)
            #expect(contents(path) == Array("new".utf8))
            #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp))?.isEmpty == true)
        }
    }

    /// A directory that cannot be written fails with an error and creates nothing.
    @Test func failsCleanlyWhereItCannotWrite() throws {
        try withDirectory { root, tmp in
            let blocked = root + "/blocked"
            // A regular file where the directory should be: neither path can create under it.
            #expect(FileManager.default.createFile(atPath: blocked, contents: Data()))
            #expect(throws: DurableFile.Failure.self) {
                try DurableFile.write(Array("x".utf8), to: blocked + "/file", tmpDir: tmp)
            }
            #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp))?.isEmpty == true)
        }
    }
}
