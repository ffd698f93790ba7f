#if canImport(Glibc)
import Glibc
#endif

/// A response body that is a range of an open file, sent by the loop with
/// `sendfile` instead of being copied through memory.
///
/// A worker opens the file and checks that the range is in the page cache
/// (`FileSegment` in Files), so the loop's `sendfile` copies from memory and
/// never waits on the disk. The descriptor is closed exactly once: by
/// libevent after sending, or here when the response is dropped unsent.
public final class FileBody: @unchecked Sendable {
    public let offset: Int
    public let length: Int
    // The loop takes the descriptor once; until then this object owns it.
    private var descriptor: Int32

    /// Takes ownership of `descriptor`.
    public init(descriptor: Int32, offset: Int, length: Int) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
    }

    /// Hands the descriptor to the caller (the loop), which must close it.
    public func take() -> Int32 {
        let fd = descriptor
        descriptor = -1
        return fd
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
