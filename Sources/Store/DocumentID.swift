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
        let seconds = UInt64(UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970)))
        // 8 + 10 + 6 hex digits, written straight into the string's storage.
        return String(unsafeUninitializedCapacity: 24) { out in
            var at = 0
            func put(_ v: UInt64, _ width: Int) {
                for i in 0..<width {
                    out[at + i] = Self.hexDigits[Int((v >> (4 * UInt64(width - 1 - i))) & 0xF)]
                }
                at += width
            }
            put(seconds, 8); put(processPart, 10); put(UInt64(count), 6)
            return at
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Client ids must be short, printable strings.
    public static func isValidClientID(_ id: String) -> Bool {
        !id.isEmpty && id.unicodeScalars.count <= 256 && !id.unicodeScalars.contains { $0.value < 0x20 || $0 == "/" }
    }
}
