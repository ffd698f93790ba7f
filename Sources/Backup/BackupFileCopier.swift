import Foundation

/// Puts one file into a backup being written: a hard link to the previous
/// backup's copy when that one is known to hold the same bytes, else a
/// copy hashed on the way.
struct BackupFileCopier {
    let staging: String
    let previousPath: String?
    let previous: [String: BackupManifest.Entry]
    let pacer: Pacer
    private(set) var linked = 0
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
    /// - Parameter sha256: the hash recorded at upload (originals): the copy
    ///   must match it, and a previous backup's entry with it is linked.
    ///   Without it (thumbnails), the previous entry is linked when the sizes agree.
    /// - Returns: the manifest entry; nil when `source` does not exist.
    mutating func place(_ relative: String, from source: String, sha256: String?) throws -> BackupManifest.Entry? {
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
}
