@testable import Backup
import Files
import Foundation
import Store
import StoreSQLite
import Testing

/// A data directory with a database of three file rows and their bytes,
/// backed up into a catalog beside it.
struct Fixture {
    let root: String
    let dataDir: String
    let catalog: BackupCatalog
    let ids = ["65f1c0e2a9b84d1e7c00003f", "65f1c0e2a9b84d1e7c000040", "65f1c0e2a9b84d1e7c000141"]

    init() throws {
        root = NSTemporaryDirectory() + "roost-backup-test-" + UUID().uuidString
        dataDir = root + "/data"
        catalog = BackupCatalog(root: root + "/backups")
        let layout = FileLayout(dataDir: dataDir)
        try layout.prepare()
        let db = try SQLiteConnection(path: dataDir + "/roost.db")
        try db.exec("CREATE TABLE _files (id TEXT PRIMARY KEY, created_at TEXT, doc TEXT); CREATE TABLE notes (n INTEGER)")
        for (i, id) in ids.enumerated() {
            let bytes = Array("file \(i) ".utf8) + [UInt8](repeating: UInt8(i), count: 1000 * (i + 1))
            try DurableFile.write(bytes, to: layout.objectPath(id), tmpDir: layout.tmp)
            let doc = "{\"sha256\":\"\(SHA256Stream.hex(bytes))\",\"size\":\(bytes.count)}"
            try db.prepare("INSERT INTO _files VALUES (?1, '', ?2)").run([.text(id), .text(doc)])
        }
        try DurableFile.write(Array("thumb".utf8), to: layout.thumbPath(ids[0], variant: "128.webp"), tmpDir: layout.tmp)
        for n in 0..<500 { try db.prepare("INSERT INTO notes VALUES (?1)").run([.int(Int64(n))]) }
    }

    func take(linkLive: Bool = true) throws -> BackupTaker.Outcome {
        var taker = BackupTaker(dataDir: dataDir, catalog: catalog)
        taker.linkLiveFiles = linkLive
        return try taker.take()
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

@Suite struct BackupVerifierTests {
    @Test func takesVerifiesAndLinksWhatIsUnchanged() throws {
        let f = try Fixture()
        defer { f.remove() }
        let first = try f.take(linkLive: false)
        #expect(first.copiedFiles == 4 && first.linkedFiles == 0 && first.linkedLiveFiles == 0)
        #expect(first.manifest.files.count == 4)
        #expect(BackupVerifier.verify(first.path).isOK)
        let second = try f.take()
        #expect(second.linkedFiles == 4 && second.copiedFiles == 0)
        #expect(BackupVerifier.verify(second.path).isOK)
        #expect(f.catalog.list().map(\.state) == ["verified", "verified"])
    }

    /// With nothing to link from, the live files (same file system) are
    /// linked, not copied: the backup's original is the live inode.
    @Test func linksLiveFilesOnTheSameFileSystem() throws {
        let f = try Fixture()
        defer { f.remove() }
        let backup = try f.take()
        #expect(backup.linkedLiveFiles == 4 && backup.copiedFiles == 0 && backup.linkedFiles == 0)
        var live = stat(), copy = stat()
        let relative = String(FileLayout(dataDir: "").objectPath(f.ids[1]).dropFirst())
        #expect(stat(f.dataDir + "/" + relative, &live) == 0 && stat(backup.path + "/" + relative, &copy) == 0)
        #expect(live.st_ino == copy.st_ino)
        let report = BackupVerifier.verify(backup.path)
        #expect(report.isOK && report.filesChecked == 5, "\(report.problems)")
    }

    static func damage(_ kind: String, _ b: String, _ f: Fixture) throws {
        let object = { (i: Int) in String(FileLayout(dataDir: "").objectPath(f.ids[i]).dropFirst()) }
        switch kind {
        case "byte changed":
            let path = b + "/" + object(1)
            var bytes = try #require(FileManager.default.contents(atPath: path))
            bytes[3] ^= 1
            try bytes.write(to: URL(fileURLWithPath: path))
        case "file missing":
            try FileManager.default.removeItem(atPath: b + "/" + object(2))
        case "manifest cut short":
            let text = try String(contentsOfFile: b + "/MANIFEST", encoding: .utf8)
            try String(text.prefix(text.count - 30)).write(toFile: b + "/MANIFEST", atomically: false, encoding: .utf8)
        case "database damaged":
            let handle = try #require(FileHandle(forWritingAtPath: b + "/roost.db"))
            try handle.seek(toOffset: 4096 + 100)
            handle.write(Data(repeating: 0xEE, count: 2000))
            try handle.close()
        default: // a row's file left out of a (re-sealed) manifest
            let m = try BackupCatalog.manifest(at: b)
            let edited = BackupManifest(createdAt: m.createdAt, seconds: m.seconds, database: m.database,
                                        files: m.files.filter { $0.path != object(0) })
            try edited.text.write(toFile: b + "/MANIFEST", atomically: false, encoding: .utf8)
        }
    }

    /// Each kind of damage to a finished backup is found, by a problem naming it.
    @Test(arguments: [
        ("byte changed", "SHA-256"), ("file missing", "No such file"), ("manifest cut short", "manifest"),
        ("database damaged", "roost.db"), ("row left out", "not in the backup"),
    ])
    func findsDamage(kind: String, expected: String) throws {
        let f = try Fixture()
        defer { f.remove() }
        let backup = try f.take()
        try Self.damage(kind, backup.path, f)
        let report = BackupVerifier.verify(backup.path)
        #expect(!report.isOK, "\(kind)")
        #expect(report.problems.contains { $0.contains(expected) }, "\(kind): \(report.problems)")
        // The taker's own check (sizes, not bytes) misses bytes changed in
        // place: integrity_check sees structure only (this damage is in a
        // page's unused space). Only the re-reading check finds those.
        let bytesOnly = kind == "byte changed" || kind == "database damaged"
        #expect(BackupVerifier.verify(backup.path, rereading: false).isOK == bytesOnly, "\(kind)")
    }

    /// A copied original must match its upload hash; a linked one its upload size.
    @Test(arguments: [false, true])
    func aLiveFileThatNoLongerMatchesItsUploadFailsTheBackup(linkLive: Bool) throws {
        let f = try Fixture()
        defer { f.remove() }
        let path = FileLayout(dataDir: f.dataDir).objectPath(f.ids[0])
        var bytes = try #require(FileManager.default.contents(atPath: path))
        if linkLive { bytes.append(1) } else { bytes[3] ^= 1 }
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: BackupError.self) { try f.take(linkLive: linkLive) }
        #expect(f.catalog.list().isEmpty)
    }

    /// The backup thread runs lowered, and is put back after where the
    /// process may raise a priority again (root).
    @Test func priorityIsLoweredForTheBackupThread() throws {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let before = getpriority(which, 0)
        let during = BackupPriority.lowered(nice: 15) { getpriority(which, 0) }
        #expect(during == max(15, before))
        if geteuid() == 0 { #expect(getpriority(which, 0) == before) }
    }

    @Test func aPartialDirectoryNeverCountsAndTheNextBackupRemovesIt() throws {
        let f = try Fixture()
        defer { f.remove() }
        try FileCopy.makeDirectories(f.catalog.root + "/.partial-roost-20260101-000000-000/files")
        #expect(f.catalog.list().map(\.state) == ["incomplete"])
        #expect(f.catalog.newest() == nil)
        _ = try f.take()
        #expect(f.catalog.list().map(\.state) == ["verified"])
    }

    @Test func keepPrunesTheOldest() throws {
        let f = try Fixture()
        defer { f.remove() }
        var taker = BackupTaker(dataDir: f.dataDir, catalog: f.catalog)
        taker.keep = 2
        var names: [String] = []
        for _ in 0..<3 { names.append(try taker.take().name); usleep(2000) }
        #expect(f.catalog.completeNames() == Array(names.suffix(2)))
    }

    @Test func restoreRefusesANonEmptyDirectoryThenReplacesItWithForce() throws {
        let f = try Fixture()
        defer { f.remove() }
        let backup = try f.take()
        let target = f.root + "/restored"
        _ = try BackupRestorer.restore(from: backup.path, into: target, force: false)
        #expect(BackupVerifier.verify(backup.path).isOK)
        #expect(throws: BackupError.self) { try BackupRestorer.restore(from: backup.path, into: target, force: false) }
        _ = try BackupRestorer.restore(from: backup.path, into: target, force: true)
        #expect(try SQLiteBackup.integrityCheck(target + "/roost.db") == ["ok"])
        #expect(try SQLiteBackup.fileRows(target + "/roost.db").count == 3)
        try BackupRestorer.checkNotInterrupted(dataDir: target)
    }

    /// While a backup holds the hold, deletes keep their paths; after, they go.
    @Test func removalsWaitForARunningBackup() throws {
        let f = try Fixture()
        defer { f.remove() }
        let daemonSide = DeferredRemovals(hold: try BackupHold(dataDir: f.dataDir))
        let backupSide = try BackupHold(dataDir: f.dataDir)
        let path = FileLayout(dataDir: f.dataDir).objectPath(f.ids[0])
        try backupSide.acquireShared()
        daemonSide.remove([path])
        #expect(FileManager.default.fileExists(atPath: path) && daemonSide.count == 1)
        #expect(try BackupHold(dataDir: f.dataDir).isBackupRunning)
        backupSide.release()
        daemonSide.flush()
        #expect(!FileManager.default.fileExists(atPath: path) && daemonSide.count == 0)
    }
}
