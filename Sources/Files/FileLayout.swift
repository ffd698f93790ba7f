import Foundation
import CFileShim

/// Where files live under the data directory:
///
/// ```
/// files/objects/<ab>/<id>           the uploaded bytes
/// files/thumbs/<ab>/<id>/<variant>  its thumbnails
/// files/tmp/                        files being written
/// ```
///
/// `ab` is the id's last two hex digits (random), so 256
/// directories share the files evenly: after the first few hundred uploads
/// no upload creates (and fsyncs) a directory, and a million files make
/// about 4,000 entries per directory, which ext4 and XFS index. Ids are
/// server-made 24-hex strings, so a path never holds client text. (Stores
/// written with the earlier `<ab>/<cd>/` layout are moved at start-up.)
public struct FileLayout: Sendable {
    public let root: String

    public init(dataDir: String) { root = dataDir + "/files" }

    public var objects: String { root + "/objects" }
    public var thumbs: String { root + "/thumbs" }
    public var tmp: String { root + "/tmp" }

    /// True for ids Roost makes: 24 lower-case hex digits.
    public static func isValidID(_ id: String) -> Bool {
        id.utf8.count == 24 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    func fanOut(_ id: String) -> String {
        let u = Array(id.utf8)
        return String(decoding: u[(u.count - 2)...], as: UTF8.self)
    }

    public func objectPath(_ id: String) -> String { objects + "/" + fanOut(id) + "/" + id }
    public func thumbDirectory(_ id: String) -> String { thumbs + "/" + fanOut(id) + "/" + id }
    public func thumbPath(_ id: String, variant: String) -> String { thumbDirectory(id) + "/" + variant }

    /// Creates the top-level directories.
    public func prepare() throws {
        for dir in [objects, thumbs, tmp] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
    }
}

/// Durable file writes: an unnamed file (O_TMPFILE) in the target's
/// directory, or else a temporary file in the data directory; fsync; link or
/// rename into place; fsync of the directory. A reader (or a crash) sees
/// either no file or the whole file.
public enum DurableFile {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static func fail(_ what: String, _ path: String) -> Failure {
        Failure(description: "\(what) \(path): \(String(cString: strerror(errno)))")
    }

    /// Writes `bytes` to `path` durably, creating parent directories.
    /// - Parameters:
    ///   - tmpDir: a directory on the same file system as `path`.
    ///   - sync: fsync the file and its directory; without, the rename is
    ///     still atomic, which survives a process crash but not a power cut.
    public static func write(_ bytes: [UInt8], to path: String, tmpDir: String, sync: Bool = true) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try ensureDirectory(directory, sync: sync)
        if try writeUnnamed(bytes, to: path, in: directory, sync: sync) { return }
        let tmp = tmpDir + "/" + UUID().uuidString
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw fail("cannot create", tmp) }
        var ok = false
        defer { if !ok { unlink(tmp) } }
        do {
            defer { close(fd) }
            try writeAll(fd, bytes, tmp)
            if sync { guard fsync(fd) == 0 else { throw fail("cannot fsync", tmp) } }
        }
        guard rename(tmp, path) == 0 else { throw fail("cannot rename into", path) }
        ok = true
        if sync { syncDirectory(directory) }
    }

    /// The fast path: an unnamed file (O_TMPFILE) in the target's own
    /// directory, written, fsynced, then linked into place. A crash before
    /// the link leaves no name and nothing to sweep; uploads share no
    /// temporary directory (and its lock). False, having written nothing
    /// visible, when the file system cannot or `path` already exists: the
    /// caller then writes a named temporary and renames it over.
    static func writeUnnamed(_ bytes: [UInt8], to path: String, in directory: String, sync: Bool) throws -> Bool {
        let fd = roost_open_unnamed(directory, 0o640)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        try writeAll(fd, bytes, path)
        if sync { guard fsync(fd) == 0 else { throw fail("cannot fsync", path) } }
        guard roost_link_unnamed(fd, path) == 0 else { return false }
        if sync { syncDirectory(directory) }
        return true
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ path: String) throws {
        try bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 { if errno == EINTR { continue }; throw fail("cannot write", path) }
                done += n
            }
        }
    }

    /// Creates `directory` (and parents), fsyncing each new entry's parent so
    /// the path itself survives a crash.
    public static func ensureDirectory(_ directory: String, sync: Bool = true) throws {
        var st = stat()
        if stat(directory, &st) == 0 { return }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != directory { try ensureDirectory(parent, sync: sync) }
        if mkdir(directory, 0o750) != 0 && errno != EEXIST { throw fail("cannot create directory", directory) }
        if sync { syncDirectory(parent) }
    }

    /// fsyncs a directory so a rename or unlink in it is durable.
    public static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Reads `length` bytes at `offset` (all when nil); nil when the file is absent.
    public static func read(_ path: String, offset: Int = 0, length: Int? = nil, limit: Int) throws -> [UInt8]? {
        guard let (fd, count) = try openRange(path, offset: offset, length: length, limit: limit) else { return nil }
        defer { close(fd) }
        return try readRange(fd, path, offset: offset, count: count)
    }

    /// Opens `path` for reading `length` bytes at `offset` (to its end when
    /// nil): the descriptor, which the caller closes, and how many bytes the
    /// range holds. Nil when the file is absent; throws above `limit`.
    static func openRange(_ path: String, offset: Int, length: Int?, limit: Int) throws -> (fd: Int32, count: Int)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw fail("cannot open", path)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else { close(fd); throw fail("cannot stat", path) }
        let size = Int(st.st_size)
        let count = max(0, min(length ?? (size - offset), size - offset))
        guard count <= limit else { close(fd); throw Failure(description: "\(path) is larger than \(limit) bytes") }
        return (fd, count)
    }

    /// Reads `count` bytes at `offset` of the open file `fd` (fewer at its end).
    static func readRange(_ fd: Int32, _ path: String, offset: Int, count: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 { if errno == EINTR { continue }; throw fail("cannot read", path) }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
    }

    /// The size of the file at `path`, or nil when absent.
    public static func size(_ path: String) -> Int? {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : nil
    }
}
