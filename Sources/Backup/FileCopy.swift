import CFileShim
import Foundation

/// Reading, hashing and copying whole files in 1 MiB chunks.
public enum FileCopy {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The source was absent (ENOENT).
        public let missing: Bool
    }

    static func fail(_ what: String, _ path: String) -> Failure {
        let code = errno
        return Failure(description: "\(what) \(path): \(String(cString: strerror(code)))", missing: code == ENOENT)
    }

    static let chunk = 1 << 20

    /// The size and SHA-256 of the file at `path`.
    public static func digest(_ path: String) throws -> (size: Int, sha256: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fail("cannot open", path) }
        defer { close(fd) }
        return try pump(fd, path, into: nil, destination: path)
    }

    /// The size of the file at `path` (stat).
    public static func size(_ path: String) throws -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else { throw fail("cannot stat", path) }
        return Int(st.st_size)
    }

    /// Copies `source` to the new file `destination` (which must not exist)
    /// and returns the size and SHA-256 of the bytes written. Not fsynced:
    /// the caller syncs the whole backup once.
    public static func copy(_ source: String, to destination: String) throws -> (size: Int, sha256: String) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw fail("cannot open", source) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        guard output >= 0 else { throw fail("cannot create", destination) }
        var ok = false
        defer {
            close(output)
            if !ok { unlink(destination) }
        }
        let result = try pump(input, source, into: output, destination: destination)
        ok = true
        return result
    }

    /// Reads `fd` to its end, hashing, and writes each chunk to `output` when given.
    private static func pump(_ fd: Int32, _ path: String, into output: Int32?, destination: String) throws -> (size: Int, sha256: String) {
        let hash = SHA256Stream()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let n = read(fd, buffer.baseAddress, chunk)
            if n < 0 { if errno == EINTR { continue }; throw fail("cannot read", path) }
            if n == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            hash.update(piece)
            if let output {
                var done = 0
                while done < n {
                    let w = write(output, piece.baseAddress! + done, n - done)
                    if w < 0 { if errno == EINTR { continue }; throw fail("cannot write", destination) }
                    done += w
                }
            }
            total += n
        }
        return (total, hash.finish())
    }

    /// Creates `path` and its parents (mode 0750).
    public static func makeDirectories(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o750])
    }

    /// fsyncs the file or directory at `path`.
    public static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fail("cannot open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw fail("cannot fsync", path) }
    }

    /// Flushes everything written to the file system holding `path`
    /// (syncfs(2)): one call instead of an fsync per file and directory.
    public static func syncFileSystem(of path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw fail("cannot open", path) }
        defer { close(fd) }
        guard roost_syncfs(fd) == 0 else { throw fail("cannot syncfs", path) }
    }
}
