import Foundation

/// Restores a verified backup into a data directory whose daemon is stopped
/// (the caller holds its `roostd.lock`).
///
/// The backup is verified first, in full. A marker file says a restore is
/// under way until the last byte is synced, and `roostd` refuses to start
/// on a data directory that has it, so a restore cut short never serves as
/// if it had worked. Everything is copied (never linked): the restored
/// store shares nothing with the backup.
public enum BackupRestorer {
    public static let markerName = "restore-incomplete"
    /// What a data directory of Roost's holds; `--force` replaces these only.
    static let ownEntries: Set<String> = ["roost.db", "roost.db-wal", "roost.db-shm", "roost.db-journal", "files", markerName]
    /// Entries that do not make a data directory "non-empty".
    static let ignored: Set<String> = ["roostd.lock", BackupHold.fileName]

    /// Throws when a restore into `dataDir` was cut short.
    public static func checkNotInterrupted(dataDir: String) throws {
        if FileManager.default.fileExists(atPath: dataDir + "/" + markerName) {
            throw BackupError("a restore into \(dataDir) did not finish (\(markerName) is there); run roostd restore again with --force")
        }
    }

    /// Restores the backup at `backup` into `dataDir`.
    /// - Parameters:
    ///   - force: replace Roost's own files in a non-empty `dataDir`.
    ///   - prepare: runs on the restored database (its path) after every byte
    ///     is in place and before the marker goes, so that what it does (the
    ///     change feed's new epoch) is part of the restore: a restore cut
    ///     short before it ends never starts.
    /// - Returns: the restored backup's manifest.
    public static func restore(from backup: String, into dataDir: String, force: Bool,
                               prepare: (String) throws -> Void = { _ in }) throws -> BackupManifest {
        let report = BackupVerifier.verify(backup)
        guard report.isOK, let manifest = report.manifest else {
            throw BackupError("\(backup) is not a complete, verified backup: \(report.problems.prefix(5).joined(separator: "; "))")
        }
        try FileCopy.makeDirectories(dataDir)
        let present = ((try? FileManager.default.contentsOfDirectory(atPath: dataDir)) ?? []).filter { !ignored.contains($0) }
        if !present.isEmpty {
            guard force else {
                throw BackupError("\(dataDir) is not empty (\(present.sorted().prefix(5).joined(separator: ", "))); use --force to replace it")
            }
            let foreign = present.filter { !ownEntries.contains($0) }
            guard foreign.isEmpty else {
                throw BackupError("\(dataDir) holds entries Roost did not make (\(foreign.sorted().prefix(5).joined(separator: ", "))); move them away first")
            }
        }
        let marker = dataDir + "/" + markerName
        try Data("restoring \(backup)\n".utf8).write(to: URL(fileURLWithPath: marker))
        try FileCopy.sync(marker)
        try FileCopy.sync(dataDir)
        for name in present where name != markerName {
            try FileManager.default.removeItem(atPath: dataDir + "/" + name)
        }
        var made = Set<String>()
        for entry in manifest.files {
            let target = dataDir + "/" + entry.path
            let directory = (target as NSString).deletingLastPathComponent
            if made.insert(directory).inserted { try FileCopy.makeDirectories(directory) }
            try copyChecked(backup + "/" + entry.path, to: target, entry)
        }
        let database = dataDir + "/" + BackupManifest.databaseName
        try copyChecked(backup + "/" + manifest.database.path, to: database + ".restoring", manifest.database)
        guard rename(database + ".restoring", database) == 0 else {
            throw BackupError("cannot rename into \(database): \(String(cString: strerror(errno)))")
        }
        try prepare(database)
        try FileCopy.syncFileSystem(of: dataDir)
        guard unlink(marker) == 0 else { throw BackupError("cannot remove \(marker): \(String(cString: strerror(errno)))") }
        try FileCopy.sync(dataDir)
        return manifest
    }

    private static func copyChecked(_ source: String, to target: String, _ entry: BackupManifest.Entry) throws {
        let copied = try FileCopy.copy(source, to: target)
        guard copied.size == entry.size, copied.sha256 == entry.sha256 else {
            throw BackupError("\(source) changed while it was restored (SHA-256 \(copied.sha256), expected \(entry.sha256))")
        }
    }
}
