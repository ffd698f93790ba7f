/// Immutable bytes that many streams send without copying: one live event
/// made once, or one round's events for every stream that gets the same
/// ones, queued to each subscriber's connection. What a socket does not take
/// at once goes into the connection's output buffer by reference
/// (`evbuffer_add_reference`), each reference holding the object until
/// libevent has sent it, so N subscribers of a 1 MB entity hold one
/// megabyte, not N.
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

    /// `pieces` one after another, in one block.
    public init(concatenating pieces: [SharedBytes]) {
        count = pieces.reduce(0) { $0 + $1.count }
        base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 1)
        var at = 0
        for piece in pieces where piece.count > 0 {
            (base + at).copyMemory(from: piece.base, byteCount: piece.count)
            at += piece.count
        }
    }

    deinit { base.deallocate() }

    /// The bytes as an array (tests and small writes).
    public var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: base, count: count)) }
}
