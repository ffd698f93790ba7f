import Backup
import Foundation
import Logging
import Store
import StoreSQLite

/// `roostd backup`, `roostd restore` and `roostd verify-backup`: each
/// returns the lines to print and throws with the reason it failed.
public enum BackupCommands {
    /// Takes a backup of `config.dataDir` into `to` (else `backups.dir`)
    /// while the daemon may be serving it.
    public static func backup(config: RoostConfig, to: String?, maxRate: Int?, keep: Int?) throws -> String {
        guard config.databaseURL == nil else { throw BackupError(RoostConfig.externalDatabaseBackups) }
        guard let root = to ?? config.backups.dir else { throw BackupError("say where with --to DIR (or set backups.dir)") }
        var taker = BackupTaker(dataDir: config.dataDir, catalog: BackupCatalog(root: root))
        taker.maxRate = maxRate ?? config.backups.maxRate
        taker.keep = keep ?? 0
        taker.objectStore = config.objectStoreLocation
        let o = try taker.take()
        if let store = taker.objectStore {
            return "backup \(o.path) verified: \(o.manifest.totalBytes) bytes, the database and an index of \(o.filesInObjectStore) files "
                + "that were NOT copied: they stay in \(store) (keep bucket versioning on), snapshot at \(o.manifest.createdAt), "
                + String(format: "%.2f s", o.seconds) + (o.pruned.isEmpty ? "" : "; removed \(o.pruned.joined(separator: ", "))")
        }
        return "backup \(o.path) verified: \(o.manifest.totalBytes) bytes, database and \(o.manifest.files.count) files "
            + "(\(o.linkedFiles) linked from the previous backup, \(o.linkedLiveFiles) from the data directory, "
            + "\(o.copiedFiles) copied), snapshot at \(o.manifest.createdAt), "
            + String(format: "%.2f s", o.seconds) + " (\(o.phases))" + (o.pruned.isEmpty ? "" : "; removed \(o.pruned.joined(separator: ", "))")
    }

    /// The backup `path` names: itself when it holds a manifest, else the
    /// newest backup in it (a backups directory).
    static func resolve(_ path: String) throws -> String {
        if let partial = partialProblem(path) { throw BackupError(partial) }
        if FileManager.default.fileExists(atPath: path + "/" + BackupManifest.fileName) { return path }
        guard let newest = BackupCatalog(root: path).newest() else { throw BackupError("\(path) holds no complete backup") }
        return newest.path
    }

    /// Restores into `dataDir`, whose daemon must be stopped (its lock is taken here).
    public static func restore(from: String, dataDir: String, force: Bool) throws -> String {
        let backup = try resolve(from)
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let lock: DataDirectoryLock
        do { lock = try DataDirectoryLock(directory: dataDir) } catch let held as DataDirectoryLock.Held {
            throw BackupError("\(held); stop roostd before restoring")
        }
        let manifest = try withExtendedLifetime(lock) {
            // A restored database starts a new timeline of the change feed:
            // cursors handed out before (from the backup's future) are refused.
            // Done before the restore's marker goes, so no restored directory
            // can start with the old epoch.
            try BackupRestorer.restore(from: backup, into: dataDir, force: force) { database in
                let writer = try DocumentWriter(path: database, ids: DocumentID(), logger: Logger(label: "roost.restore"))
                try writer.migrate()
                if case .failure(let error) = writer.commitBatch([{ try $0.renewFeedEpoch() }])[0] { throw error }
                writer.checkpoint()
            }
        }
        return "restored \(backup) (snapshot at \(manifest.createdAt): \(manifest.totalBytes) bytes, \(manifest.files.count) files) into \(dataDir)"
    }

    /// Why `path` is not a backup to trust: a `.partial-…` directory was
    /// never finished (its run may have been killed before it was synced),
    /// even when what it holds happens to check out.
    static func partialProblem(_ path: String) -> String? {
        let name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
        return name.hasPrefix(BackupCatalog.partialPrefix) ? "\(path) is a partial backup that never finished; use a complete roost-… one" : nil
    }

    /// Verifies one backup (or every one in a backups directory); false when any fails.
    public static func verify(_ path: String) -> (ok: Bool, text: String) {
        let paths = FileManager.default.fileExists(atPath: path + "/" + BackupManifest.fileName)
            ? [path] : BackupCatalog(root: path).list().map(\.path)
        guard !paths.isEmpty else { return (false, "\(path): no backup here") }
        var ok = true, lines: [String] = []
        for p in paths {
            if let partial = partialProblem(p) {
                ok = false
                lines.append("\(p): FAILED\n  " + partial)
                continue
            }
            let r = BackupVerifier.verify(p)
            ok = ok && r.isOK
            lines.append(r.isOK
                ? "\(p): ok (\(r.filesChecked) files, \(r.bytesChecked) bytes checked, snapshot at \(r.manifest?.createdAt ?? "?"))"
                : "\(p): FAILED\n" + r.problems.map { "  " + $0 }.joined(separator: "\n"))
        }
        return (ok, lines.joined(separator: "\n"))
    }
}
