import Files
import Foundation
import Store
import StoreSQLite

/// Takes one online backup of a data directory into a `BackupCatalog`.
///
/// 1. Under the catalog's lock, partial directories of crashed runs go.
/// 2. `BackupHold` is taken shared, then the database is copied from one
///    read snapshot (`SQLiteBackup`); the writer keeps committing.
/// 3. The `_files` rows of that copy define which files belong: each
///    original and thumbnail on disk is hard-linked or copied
///    (`BackupFileCopier`; a missing thumbnail is made again on demand).
///    Deletes committed after the snapshot unlink nothing until the hold is
///    released, so every file the snapshot names is still there.
/// 4. The copy is hashed once (the manifest's hash is of the bytes on
///    disk); the sealed manifest is written; the directory is verified
///    (`BackupVerifier`, sizes rather than re-reading), synced, and only
///    then renamed from `.partial-roost-…` to `roost-…`.
///
/// The calling thread runs under `SCHED_IDLE` at nice `nice` and the lowest best-effort I/O
/// priority for the while (`BackupPriority`).
public struct BackupTaker: Sendable {
    public let dataDir: String
    public let catalog: BackupCatalog
    /// Bytes per second to read and write at most (nil: as fast as the disk goes).
    public var maxRate: Int?
    /// Complete backups to keep in the catalog (0: all).
    public var keep = 0
    /// Checked between chunks: true stops the backup (it throws, leaving nothing).
    public var isCancelled: @Sendable () -> Bool = { false }
    /// The calling thread's nice value while it backs up (0: unchanged).
    public var nice: Int32 = 10
    /// Hard-link live files when the backup shares their file system (off: copy them).
    public var linkLiveFiles = true
    /// Where the files live when not on this disk (`files_store: s3`, e.g.
    /// `s3://bucket/prefix/`): they are not copied; the backup holds an index
    /// of them instead (`BackupTaker.objectIndexName`; see the README).
    public var objectStore: String?

    /// The list of files a backup did not copy because they are in an object store.
    public static let objectIndexName = "files-in-object-store.txt"

    public init(dataDir: String, catalog: BackupCatalog) {
        self.dataDir = dataDir
        self.catalog = catalog
    }

    /// What one backup did.
    public struct Outcome: Sendable {
        public let name: String
        public let path: String
        public let manifest: BackupManifest
        /// Linked from the previous backup.
        public let linkedFiles: Int
        /// Linked from the data directory (same file system).
        public let linkedLiveFiles: Int
        public let copiedFiles: Int
        public let copiedBytes: Int
        /// Wall time, verification included.
        public let seconds: Double
        /// Where the wall time went, in order (e.g. `copy`, `hash`, `verify`, `sync`).
        public let phases: PhaseTimes
        public let pruned: [String]
        /// Files the database names that stay in the object store, listed in the index, not copied.
        public var filesInObjectStore = 0
    }

    /// Takes the backup; throws with the reason, leaving nothing that looks complete.
    public func take() throws -> Outcome {
        try BackupPriority.lowered(nice: nice) { try takeNow() }
    }

    private func takeNow() throws -> Outcome {
        let started = DispatchTime.now().uptimeNanoseconds
        var phases = PhaseTimes()
        let lockFD = try catalog.lock()
        defer { close(lockFD) }
        catalog.removePartials()
        let name = BackupCatalog.name(at: Date())
        let staging = catalog.root + "/" + BackupCatalog.partialPrefix + name
        let final = catalog.root + "/" + name
        guard !FileManager.default.fileExists(atPath: final) else { throw BackupError("\(final) already exists") }
        try FileCopy.makeDirectories(staging)
        do {
            var copier = BackupFileCopier(staging: staging, previous: catalog.newest(), pacer: Pacer(bytesPerSecond: maxRate, isCancelled: isCancelled))
            copier.linkLive = linkLiveFiles
            let (createdAt, files, database, integrity) = try snapshot(into: staging, copier: &copier, phases: &phases)
            let indexed = objectStore == nil ? 0 : try SQLiteBackup.fileRows(staging + "/" + BackupManifest.databaseName).count
            let copySeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let manifest = BackupManifest(createdAt: createdAt, seconds: copySeconds,
                                          database: .init(path: BackupManifest.databaseName, size: database.size, sha256: database.sha256),
                                          files: files)
            try Data(manifest.text.utf8).write(to: URL(fileURLWithPath: staging + "/" + BackupManifest.fileName))
            let report = BackupVerifier.verify(staging, rereading: false, integrity: integrity)
            guard report.isOK else {
                throw BackupError("the new backup failed verification: \(report.problems.prefix(5).joined(separator: "; "))")
            }
            phases.end("verify")
            try FileCopy.syncFileSystem(of: staging)
            guard rename(staging, final) == 0 else { throw BackupError("cannot rename \(staging): \(String(cString: strerror(errno)))") }
            try FileCopy.sync(catalog.root)
            phases.end("sync")
            FileCopy.dropCache(final + "/" + BackupManifest.databaseName)
            let pruned = catalog.prune(keep: keep)
            var outcome = Outcome(name: name, path: final, manifest: manifest, linkedFiles: copier.linked,
                                  linkedLiveFiles: copier.linkedLive, copiedFiles: copier.copied,
                                  copiedBytes: copier.copiedBytes, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9,
                                  phases: phases, pruned: pruned)
            outcome.filesInObjectStore = indexed
            return outcome
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
    }

    /// Steps 2 and 3, under the hold: the database copy, then on two threads
    /// at once `integrity_check` of the copy and (here) the files it names
    /// and the copy's hash: the two cores share the work that only reads.
    private func snapshot(into staging: String, copier: inout BackupFileCopier, phases: inout PhaseTimes) throws
        -> (createdAt: String, files: [BackupManifest.Entry], database: (size: Int, sha256: String), integrity: Result<[String], any Error>) {
        let hold = try BackupHold(dataDir: dataDir)
        try hold.acquireShared()
        defer { hold.release() }
        var createdAt = Timestamp.now()
        let copy = staging + "/" + BackupManifest.databaseName
        let pacer = copier.pacer
        let writeback = FileCopy.Writeback(path: copy)
        _ = try SQLiteBackup.copy(from: dataDir + "/roost.db", to: copy, snapshotTaken: { createdAt = Timestamp.now() },
                                  progress: { pacer.account($0); writeback.start(); return pacer.shouldContinue })
        try SQLiteBackup.makeStandalone(copy)
        phases.end("copy")
        let integrity = IntegrityCheckInBackground(copy, nice: nice)
        defer { integrity.wait() }
        if let objectStore {
            let index = try indexObjects(SQLiteBackup.fileRows(copy), in: objectStore, staging: staging)
            phases.end("files")
            let database = try FileCopy.digest(copy)
            phases.end("hash")
            let check = integrity.wait()
            phases.end("integrity")
            return (createdAt, [index], database, check)
        }
        let layout = FileLayout(dataDir: dataDir)
        var files: [BackupManifest.Entry] = []
        for row in try SQLiteBackup.fileRows(copy) {
            guard pacer.shouldContinue else { throw BackupError("cancelled") }
            guard FileLayout.isValidID(row.id) else { throw BackupError("file row \"\(row.id)\" has an id Roost does not make") }
            guard let original = try copier.place(BackupVerifier.objectPath(row.id), from: layout.objectPath(row.id), sha256: row.sha256, size: row.size) else {
                throw BackupError("file \(row.id) is in the database but its bytes are missing from \(layout.objects)")
            }
            files.append(original)
            let thumbs = layout.thumbDirectory(row.id)
            let relative = String(FileLayout(dataDir: "").thumbDirectory(row.id).dropFirst())
            // Most files have no thumbnails: one access(2) instead of a thrown error each.
            guard access(thumbs, F_OK) == 0 else { continue }
            for variant in ((try? FileManager.default.contentsOfDirectory(atPath: thumbs)) ?? []).sorted()
            where BackupManifest.isSafePath(variant) {
                if let entry = try copier.place(relative + "/" + variant, from: thumbs + "/" + variant, sha256: nil) { files.append(entry) }
            }
        }
        phases.end("files")
        let database = try FileCopy.digest(copy)
        phases.end("hash")
        let check = integrity.wait()
        phases.end("integrity")
        return (createdAt, files, database, check)
    }

    /// Writes the index of files kept in an object store (id, size, SHA-256
    /// of each row's bytes), which the manifest then seals like any file.
    private func indexObjects(_ rows: [SQLiteBackup.FileRow], in store: String, staging: String) throws -> BackupManifest.Entry {
        var text = "# Files this backup's database names, kept in \(store) and NOT copied here.\n"
            + "# Restoring them relies on the bucket (keep versioning on). One line each: id size sha256\n"
        for row in rows { text += "\(row.id) \(row.size ?? -1) \(row.sha256 ?? "-")\n" }
        let path = staging + "/" + Self.objectIndexName
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let digest = try FileCopy.digest(path)
        return BackupManifest.Entry(path: Self.objectIndexName, size: digest.size, sha256: digest.sha256)
    }
}
