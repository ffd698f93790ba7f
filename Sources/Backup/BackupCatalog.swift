import Foundation

/// A directory of backups (`backups.dir`, `roostd backup --to`):
///
/// ```
/// <root>/roost-20260502-101500-123/    complete: verified, then renamed
/// <root>/.partial-roost-…/             being written, or abandoned by a crash
/// <root>/.lock                         held by the one backup running here
/// ```
///
/// Only `roost-*` directories with a sealed manifest count; a partial one
/// never looks complete, and the next backup removes it.
public struct BackupCatalog: Sendable {
    public let root: String

    public static let prefix = "roost-"
    public static let partialPrefix = ".partial-"

    public init(root: String) { self.root = root }

    /// One backup as the listing shows it.
    public struct Listing: Sendable {
        public let name: String
        public let path: String
        /// `verified` (complete, checked before it was renamed), `incomplete`
        /// (partial: being written or abandoned) or `invalid` (a bad manifest).
        public let state: String
        public let createdAt: String?
        public let seconds: Double?
        public let bytes: Int
        public let files: Int
        public let problem: String?
    }

    /// A new backup's name, from the time: sorts oldest first.
    public static func name(at date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&t, &parts)
        let ms = Int(date.timeIntervalSince1970 * 1000) % 1000
        return prefix + String(format: "%04d%02d%02d-%02d%02d%02d-%03d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                               Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), ms)
    }

    /// Names of complete-looking backups (`roost-*`), oldest first.
    public func completeNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .filter { $0.hasPrefix(Self.prefix) }
            .sorted()
    }

    /// Partial directories left here.
    public func partialNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0.hasPrefix(Self.partialPrefix) }.sorted()
    }

    /// The newest backup whose manifest reads, with that manifest.
    public func newest() -> (path: String, manifest: BackupManifest)? {
        for name in completeNames().reversed() {
            let path = root + "/" + name
            if let m = try? Self.manifest(at: path) { return (path, m) }
        }
        return nil
    }

    /// The sealed manifest of the backup at `path`.
    public static func manifest(at path: String) throws -> BackupManifest {
        let text: String
        do { text = try String(contentsOfFile: path + "/" + BackupManifest.fileName, encoding: .utf8) } catch {
            throw BackupError("\(path) has no readable \(BackupManifest.fileName)")
        }
        return try BackupManifest.parse(text)
    }

    /// Every backup and partial one, oldest first.
    public func list() -> [Listing] {
        var out: [Listing] = []
        for name in completeNames() {
            let path = root + "/" + name
            do {
                let m = try Self.manifest(at: path)
                out.append(Listing(name: name, path: path, state: "verified", createdAt: m.createdAt, seconds: m.seconds,
                                   bytes: m.totalBytes, files: m.files.count, problem: nil))
            } catch {
                out.append(Listing(name: name, path: path, state: "invalid", createdAt: nil, seconds: nil, bytes: 0, files: 0,
                                   problem: "\(error)"))
            }
        }
        for name in partialNames() {
            out.append(Listing(name: name, path: root + "/" + name, state: "incomplete", createdAt: nil, seconds: nil,
                               bytes: 0, files: 0, problem: nil))
        }
        return out
    }

    /// Removes the oldest complete backups beyond `keep`. Call holding the root lock.
    /// - Returns: the names removed.
    @discardableResult
    public func prune(keep: Int) -> [String] {
        let names = completeNames()
        guard keep > 0, names.count > keep else { return [] }
        let doomed = Array(names.prefix(names.count - keep))
        for name in doomed { try? FileManager.default.removeItem(atPath: root + "/" + name) }
        return doomed
    }

    /// Removes partial directories. Call holding the root lock: then no
    /// backup is writing them.
    public func removePartials() {
        for name in partialNames() { try? FileManager.default.removeItem(atPath: root + "/" + name) }
    }

    /// Takes `<root>/.lock` (exclusive, not waiting): one backup at a time per directory.
    /// - Returns: the descriptor to close when done.
    public func lock() throws -> Int32 {
        try FileCopy.makeDirectories(root)
        let fd = open(root + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw BackupError("cannot open \(root)/.lock: \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw BackupError.busy(root)
        }
        return fd
    }
}

extension BackupError {
    /// Another backup is being written to `root`.
    public static func busy(_ root: String) -> BackupError { BackupError("a backup to \(root) is already running") }

    public var isBusy: Bool { description.hasSuffix("is already running") }
}
