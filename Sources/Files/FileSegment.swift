import CFileShim
import Foundation
import HTTP

/// A stored file opened for sending: either a descriptor whose range sits in
/// the page cache (the loop may `sendfile` it without touching the disk), or
/// the bytes themselves, read here when they were not cached.
public enum FileSegment {
    case cached(FileBody)
    case bytes([UInt8])

    /// Opens `length` bytes at `offset` of `path` (all when nil); nil when the file is absent.
    /// Runs on a worker: it may wait on the disk.
    public static func open(_ path: String, offset: Int = 0, length: Int? = nil, limit: Int) throws -> FileSegment? {
        guard let (fd, count) = try DurableFile.openRange(path, offset: offset, length: length, limit: limit) else { return nil }
        var owned = true
        defer { if owned { close(fd) } }
        // Small ranges: one read is cheaper than mapping and asking the kernel.
        if count <= smallRead { return .bytes(try DurableFile.readRange(fd, path, offset: offset, count: count)) }
        if count > 0 && isResident(fd, offset: offset, count: count) {
            owned = false
            return .cached(FileBody(descriptor: fd, offset: offset, length: count))
        }
        return .bytes(try DurableFile.readRange(fd, path, offset: offset, count: count))
    }

    /// Ranges up to this size are read, not sent with `sendfile`.
    static let smallRead = 32 * 1024

    /// True when every page of the range is in the page cache: `cachestat`
    /// (Linux 6.5+), else `mincore` over a temporary mapping.
    static func isResident(_ fd: Int32, offset: Int, count: Int) -> Bool {
        var cached: UInt64 = 0, pages: UInt64 = 0
        if roost_cached_pages(fd, UInt64(offset), UInt64(count), &cached, &pages) == 0 { return cached >= pages }
        return isResidentByMincore(fd, offset: offset, count: count)
    }

    static func isResidentByMincore(_ fd: Int32, offset: Int, count: Int) -> Bool {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = offset / page * page
        let span = offset + count - start
        guard let map = mmap(nil, span, PROT_READ, MAP_SHARED, fd, off_t(start)), map != MAP_FAILED else { return false }
        defer { munmap(map, span) }
        let pages = (span + page - 1) / page
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(map, span, &vector) == 0 else { return false }
        return vector.allSatisfy { $0 & 1 == 1 }
    }
}
