import Foundation

/// Generates 24-hex-digit ids shaped like MongoDB ObjectIds: seconds since
/// the epoch, a per-process random part, and a counter. Ids from several
/// processes never collide and sort roughly by creation time.
public final class DocumentID: @unchecked Sendable {
    private let lock = NSLock()
    private let processPart: UInt64 = UInt64.random(in: 0..<(1 << 40))
    private var counter: UInt32 = UInt32.random(in: 0..<(1 << 24))

    public init() {}

    public func next() -> String {
        lock.lock()
        counter = (counter &+ 1) & 0xFFFFFF
        let count = counter
        lock.unlock()
        let seconds = UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970))
        return hex(UInt64(seconds), 8) + hex(processPart, 10) + hex(UInt64(count), 6)
    }

    private func hex(_ v: UInt64, _ width: Int) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// Client ids must be short, printable strings.
    public static func isValidClientID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 256 && !id.unicodeScalars.contains { $0.value < 0x20 || $0 == "/" }
    }
}
