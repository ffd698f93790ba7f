/// Immutable bytes that many streams send without copying: one live event
/// made once and queued to every subscriber's connection. Large ones go into
/// the connections' output buffers by reference (`evbuffer_add_reference`),
/// each reference holding the object until libevent has sent it, so N
/// subscribers of a 1 MB entity hold one megabyte, not N.
public final class SharedBytes: @unchecked Sendable {
    /// Fixed once made; freed when the last holder lets go.
    let base: UnsafeMutableRawPointer
    public let count: Int

    public init(_ bytes: [UInt8]) {
        count = bytes.count
        base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 1)
        bytes.withUnsafeBytes { raw in
            if let source = raw.baseAddress, count > 0 { base.copyMemory(from: source, byteCount: count) }
        }
    }

    deinit { base.deallocate() }

    /// The bytes as an array (tests and small writes).
    public var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: base, count: count)) }

    /// Below this size a copy costs less than a reference (a chain of its own in the buffer).
    static let referenceThreshold = 2048
}
