import Foundation
@testable import Files
import Logging
import Testing

@Suite struct FileSweeperTests {
    /// A store written with the old `<ab>/<cd>/<id>` layout keeps its files and
    /// thumbnails at start-up; the sweep then finds nothing to remove.
    @Test func movesTheTwoLevelLayoutUp() throws {
        let dataDir = NSTemporaryDirectory() + "roost-sweep-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let layout = FileLayout(dataDir: dataDir)
        let id = "6b021b262dbb8361c1b82a1c"
        let oldObject = layout.objects + "/1c/2a/" + id
        let oldThumbs = layout.thumbs + "/1c/2a/" + id
        try FileManager.default.createDirectory(atPath: oldObject.dropLastComponent, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: oldThumbs, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: oldObject, contents: Data("bytes".utf8)))
        #expect(FileManager.default.createFile(atPath: oldThumbs + "/128.jpg", contents: Data("thumb".utf8)))

        let outcome = try FileSweeper(layout: layout, logger: Logger(label: "test")).sweep(rows: [id])
        #expect(outcome.orphanFilesRemoved == 0 && outcome.orphanThumbnailsRemoved == 0 && outcome.rowsWithoutFiles.isEmpty)
        #expect(FileManager.default.contents(atPath: layout.objectPath(id)) == Data("bytes".utf8))
        #expect(FileManager.default.contents(atPath: layout.thumbPath(id, variant: "128.jpg")) == Data("thumb".utf8))
        #expect(!FileManager.default.fileExists(atPath: layout.objects + "/1c/2a"))
    }

    @Test func removesOrphansAndReportsMissingFiles() throws {
        let dataDir = NSTemporaryDirectory() + "roost-sweep-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let layout = FileLayout(dataDir: dataDir)
        try layout.prepare()
        let kept = "6b021b262dbb8361c1b82a1c", orphan = "6b021b262dbb8361c1b82a1d", missing = "6b021b262dbb8361c1b82a1e"
        for id in [kept, orphan] { try DurableFile.write(Array(id.utf8), to: layout.objectPath(id), tmpDir: layout.tmp) }
        #expect(FileManager.default.createFile(atPath: layout.tmp + "/half-written", contents: Data([1])))
        let outcome = try FileSweeper(layout: layout, logger: Logger(label: "test")).sweep(rows: [kept, missing])
        #expect(outcome.temporaryRemoved == 1 && outcome.orphanFilesRemoved == 1)
        #expect(outcome.rowsWithoutFiles == [missing])
        #expect(FileManager.default.fileExists(atPath: layout.objectPath(kept)))
        #expect(!FileManager.default.fileExists(atPath: layout.objectPath(orphan)))
    }
}

extension String {
    var dropLastComponent: String { (self as NSString).deletingLastPathComponent }
}
