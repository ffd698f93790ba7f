import Foundation

/// Puts one file into a backup being written, in the cheapest way that is
/// known to hold the right bytes:
///
/// 1. a hard link to the previous backup's copy, when that one was verified
///    with the same SHA-256 (originals) or size (thumbnails);
/// 2. a hard link to the live file itself, when the backup is on the data
///    directory's file system (originals and thumbnails are written once,
///    under a temporary name renamed into place, and never changed after);
/// 3. else a copy, hashed on the way.
///
/// A linked original is not read: its size is checked and its SHA-256 is the
/// one recorded at upload (`roostd verify-backup` reads it back). A copied
/// original must match that hash. Thumbnails, which have no recorded hash,
/// are hashed whether linked or copied.
struct BackupFileCopier {
    let staging: String
    let previousPath: String?
    let previous: [String: BackupManifest.Entry]
    let pacer: Pacer
    /// Link live files (step 2); off once a link fails across file systems.
    var linkLive = true
    private(set) var linked = 0
    private(set) var linkedLive = 0
    private(set) var copied = 0
    private(set) var copiedBytes = 0
    private var directories = Set<String>()

    init(staging: String, previous: (path: String, manifest: BackupManifest)?, pacer: Pacer) {
        self.staging = staging
        self.pacer = pacer
        previousPath = previous?.path
        self.previous = Dictionary((previous?.manifest.files ?? []).map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Places the live file `source` at `relative` in the backup.
    /// - Parameters:
    ///   - sha256: the hash recorded at upload (originals): a copy must match
    ///     it, a link is listed with it. Without it (thumbnails), the bytes are hashed.
    ///   - size: the size recorded at upload, which a linked original must have.
    /// - Returns: the manifest entry; nil when `source` does not exist.
    mutating func place(_ relative: String, from source: String, sha256: String?, size: Int? = nil) throws -> BackupManifest.Entry? {
        let target = staging + "/" + relative
        let directory = (target as NSString).deletingLastPathComponent
        if !directories.contains(directory) {
            try FileCopy.makeDirectories(directory)
            directories.insert(directory)
        }
        if let entry = previous[relative], let previousPath {
            var st = stat()
            let same = sha256.map { $0 == entry.sha256 } ?? (stat(source, &st) == 0 && Int(st.st_size) == entry.size)
            if same && link(previousPath + "/" + relative, target) == 0 {
                linked += 1
                return entry
            }
        }
        if linkLive, let entry = try linkFromStore(relative, source, target, sha256: sha256, size: size) { return entry }
        let result: (size: Int, sha256: String)
        do { result = try FileCopy.copy(source, to: target) } catch let e as FileCopy.Failure where e.missing {
            return nil
        }
        if let sha256, sha256 != result.sha256 {
            throw BackupError("\(source) no longer matches the SHA-256 recorded at upload (\(sha256), now \(result.sha256))")
        }
        copied += 1
        copiedBytes += result.size
        pacer.account(result.size)
        return BackupManifest.Entry(path: relative, size: result.size, sha256: result.sha256)
    }

    /// Step 2: nil when the live file cannot be linked (then it is copied).
    private mutating func linkFromStore(_ relative: String, _ source: String, _ target: String,
                                        sha256: String?, size: Int?) throws -> BackupManifest.Entry? {
        guard link(source, target) == 0 else {
            if errno == EXDEV { linkLive = false }
            return nil
        }
        var st = stat()
        guard stat(target, &st) == 0 else { throw BackupError("cannot stat \(target): \(String(cString: strerror(errno)))") }
        let entry: BackupManifest.Entry
        if let sha256 {
            if let size, size != Int(st.st_size) {
                throw BackupError("\(source) is \(st.st_size) bytes; its upload recorded \(size) (SHA-256 \(sha256))")
            }
            entry = BackupManifest.Entry(path: relative, size: Int(st.st_size), sha256: sha256)
        } else {
            let found = try FileCopy.digest(target)
            pacer.account(found.size)
            entry = BackupManifest.Entry(path: relative, size: found.size, sha256: found.sha256)
        }
        linkedLive += 1
        return entry
    }
}
