@testable import Backup
import Foundation
import Store
import StoreSQLite
import Testing

@Suite struct BackupRestorerTests {
    struct Refused: Error {}

    /// `prepare` (the change feed's new epoch) runs on the restored database
    /// while the marker is still there: a restore cut short before it ends,
    /// or whose `prepare` fails, never starts with the backup's old epoch.
    @Test func prepareRunsBeforeTheMarkerGoesAndItsFailureLeavesItThere() throws {
        let f = try Fixture()
        defer { f.remove() }
        let backup = try f.take()
        let target = f.root + "/restored"
        var sawMarker = false
        _ = try BackupRestorer.restore(from: backup.path, into: target, force: false) { database in
            sawMarker = FileManager.default.fileExists(atPath: target + "/" + BackupRestorer.markerName)
            #expect(database == target + "/roost.db")
            let check = try SQLiteBackup.integrityCheck(database)
            #expect(check == ["ok"])
        }
        #expect(sawMarker)
        try BackupRestorer.checkNotInterrupted(dataDir: target)

        #expect(throws: Refused.self) {
            try BackupRestorer.restore(from: backup.path, into: target, force: true) { _ in throw Refused() }
        }
        #expect(throws: BackupError.self) { try BackupRestorer.checkNotInterrupted(dataDir: target) }
    }
}
