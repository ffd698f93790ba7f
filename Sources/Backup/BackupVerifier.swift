import Files
import Foundation
import Store
import StoreSQLite

/// Checks a backup directory: the manifest's seal, `PRAGMA integrity_check`
/// on its database, every listed file present with its size and SHA-256,
/// and every file row of its database backed by a listed file with the
/// hash recorded at upload. Reads the backup only.
///
/// `BackupTaker` checks its new backup without re-reading the bytes (sizes
/// only): their hashes were just computed from them, or recorded at upload
/// for linked originals, and reading them back at once would only read the
/// page cache again. `roostd verify-backup` and restore read every byte.
public enum BackupVerifier {
    /// What verification found; `isOK` when nothing.
    public struct Report: Sendable {
        public var manifest: BackupManifest?
        public var problems: [String] = []
        public var filesChecked = 0
        public var bytesChecked = 0
        public var isOK: Bool { manifest != nil && problems.isEmpty }
    }

    /// The relative path of file `id`'s original, as in a data directory.
    static func objectPath(_ id: String) -> String { String(FileLayout(dataDir: "").objectPath(id).dropFirst()) }

    /// The index of files kept in an object store, keyed like manifest paths: path → SHA-256.
    static func objectIndex(_ path: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            if fields.count == 3 { out[objectPath(String(fields[0]))] = String(fields[2]) }
        }
        return out
    }

    /// Verifies the backup at `path`.
    /// - Parameters:
    ///   - rereading: hash every byte it lists (else check each size).
    ///   - integrity: the database's `integrity_check` result when the caller
    ///     already ran it on these bytes (nil: run it now).
    public static func verify(_ path: String, rereading: Bool = true, integrity: Result<[String], any Error>? = nil) -> Report {
        var report = Report()
        func problem(_ p: String) { if report.problems.count < 100 { report.problems.append(p) } }
        let manifest: BackupManifest
        do { manifest = try BackupCatalog.manifest(at: path) } catch {
            problem("\(error)")
            return report
        }
        report.manifest = manifest
        for entry in [manifest.database] + manifest.files {
            do {
                guard rereading else {
                    let size = try FileCopy.size(path + "/" + entry.path)
                    report.filesChecked += 1
                    if size != entry.size { problem("\(entry.path): \(size) bytes, the manifest says \(entry.size)") }
                    continue
                }
                let found = try FileCopy.digest(path + "/" + entry.path)
                report.filesChecked += 1
                report.bytesChecked += found.size
                if found.size != entry.size || found.sha256 != entry.sha256 {
                    problem("\(entry.path): \(found.size) bytes with SHA-256 \(found.sha256), the manifest says \(entry.size) bytes with \(entry.sha256)")
                }
            } catch {
                problem("\(entry.path): \(error)")
            }
        }
        let database = path + "/" + BackupManifest.databaseName
        do {
            let check = try integrity?.get() ?? SQLiteBackup.integrityCheck(database)
            if check != ["ok"] { problem("integrity_check: \(check.prefix(10).joined(separator: "; "))") }
            var listed = Dictionary(manifest.files.map { ($0.path, $0.sha256) }, uniquingKeysWith: { a, _ in a })
            // Files kept in an object store: their index stands for them.
            if listed[BackupTaker.objectIndexName] != nil {
                listed = try objectIndex(path + "/" + BackupTaker.objectIndexName)
            }
            for row in try SQLiteBackup.fileRows(database) {
                guard let sha256 = listed[objectPath(row.id)] else {
                    problem("file \(row.id) has a row but is not in the backup")
                    continue
                }
                if let sha = row.sha256, sha != sha256 { problem("file \(row.id): its row says SHA-256 \(sha), the backup holds \(sha256)") }
            }
        } catch {
            problem("database: \(error)")
        }
        return report
    }
}
